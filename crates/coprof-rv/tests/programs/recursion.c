/* recursion.c: deep and branchy recursion exercising calls, returns and
 * the stack (return-address prediction's hard cases for a profiler):
 * Ackermann, naive Fibonacci, Towers of Hanoi, N-queens, permutations,
 * mutual recursion, and a recursive-descent expression evaluator. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "corpus.h"

static uint64_t ackermann(uint64_t m, uint64_t n) {
    if (m == 0) return n + 1;
    if (n == 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}
static uint64_t fib(int n) { return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2); }

static uint64_t moves, hanoi_hash = FNV_INIT;
static void hanoi(int n, int from, int to, int via) {
    if (n == 0) return;
    hanoi(n - 1, from, via, to);
    moves++;
    hanoi_hash = (hanoi_hash ^ (uint64_t)(from * 3 + to)) * 0x100000001b3ULL;
    hanoi(n - 1, via, to, from);
}

static int queens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2) {
    if (row == n) return 1;
    int count = 0;
    for (uint32_t avail = ~(cols | d1 | d2) & ((1u << n) - 1); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        count += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return count;
}

static int perm_count;
static uint64_t perm_hash = FNV_INIT;
static void permute(char *s, int k, int n) {
    if (k == n) {
        perm_count++;
        perm_hash = fnv1a(perm_hash, s, n);
        if (perm_count <= 5 || perm_count % 1000 == 0)
            printf("perm %d: %s\n", perm_count, s);
        return;
    }
    for (int i = k; i < n; i++) {
        char t = s[k]; s[k] = s[i]; s[i] = t;
        permute(s, k + 1, n);
        t = s[k]; s[k] = s[i]; s[i] = t;
    }
}

static int is_even(unsigned n);
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }

/* expr := term (('+'|'-') term)* ; term := factor (('*'|'/'|'%') factor)* ;
 * factor := number | '(' expr ')' | '-' factor */
static const char *cur;
static long expr(void);
static long factor(void) {
    while (*cur == ' ') cur++;
    if (*cur == '(') { cur++; long v = expr(); while (*cur == ' ') cur++; if (*cur == ')') cur++; return v; }
    if (*cur == '-') { cur++; return -factor(); }
    long v = 0;
    while (*cur >= '0' && *cur <= '9') v = v * 10 + (*cur++ - '0');
    return v;
}
static long term(void) {
    long v = factor();
    for (;;) {
        while (*cur == ' ') cur++;
        char op = *cur;
        if (op != '*' && op != '/' && op != '%') return v;
        cur++;
        long r = factor();
        if (op == '*') v *= r;
        else if (r == 0) v = 0;
        else if (op == '/') v /= r;
        else v %= r;
    }
}
static long expr(void) {
    long v = term();
    for (;;) {
        while (*cur == ' ') cur++;
        char op = *cur;
        if (op != '+' && op != '-') return v;
        cur++;
        long r = term();
        v = op == '+' ? v + r : v - r;
    }
}
static long eval(const char *s) { cur = s; return expr(); }

int main(void) {
    for (uint64_t m = 0; m <= 3; m++)
        for (uint64_t n = 0; n <= 5; n++)
            printf("A(%llu,%llu)=%llu%s", (unsigned long long)m, (unsigned long long)n,
                   (unsigned long long)ackermann(m, n), n == 5 ? "\n" : " ");
    printf("A(3,7)=%llu\n", (unsigned long long)ackermann(3, 7));
    for (int n = 0; n <= 27; n += 3)
        printf("fib(%d)=%llu\n", n, (unsigned long long)fib(n));
    hanoi(18, 0, 2, 1);
    printf("hanoi(18): %llu moves, hash %016llx\n", (unsigned long long)moves, (unsigned long long)hanoi_hash);
    for (int n = 1; n <= 10; n++)
        printf("queens(%d)=%d\n", n, queens(n, 0, 0, 0, 0));
    char s[] = "abcdefg";
    permute(s, 0, 7);
    printf("permutations %d hash %016llx\n", perm_count, (unsigned long long)perm_hash);
    printf("is_even(100001)=%d is_odd(77777)=%d\n", is_even(100001), is_odd(77777));
    static const char *exprs[] = {"1+2*3", "(1+2)*3", "-(4-10)*-(2)", "100/7%4", "2*(3+(4*(5+(6*(7+8)))))",
                                  "1-2-3-4", "12345679*9", "((((((((1))))))))+-1", "7/0", "- - -5"};
    for (unsigned i = 0; i < sizeof exprs / sizeof exprs[0]; i++)
        printf("eval(%s) = %ld\n", exprs[i], eval(exprs[i]));
    return 0;
}

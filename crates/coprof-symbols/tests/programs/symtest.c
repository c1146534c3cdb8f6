/* Test program for coprof-symbols: a function with a loop that calls an
 * inlined helper from another file. Tests find lines by their MARK
 * comments, never by number. */
#include "scale.h"

__attribute__((noinline)) int sum_scaled(const int *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) { /* MARK:loop_head */
        s += scale(a[i]);         /* MARK:loop_body */
    }
    return s; /* MARK:return */
}

int data[256];

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < 256; i++) /* MARK:fill */
        data[i] = i * argc;
    return sum_scaled(data, 256 - argc) & 0x7f; /* MARK:call */
}

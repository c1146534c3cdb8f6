/*
 * sqlrun: a small driver for SQLite (libsqlite3-sys ships the sqlite3.c
 * amalgamation without the shell), built by workloads/build-real.sh as a
 * real workload for coprof's simulator: a B-tree storage engine, a query
 * planner and a bytecode virtual machine (VDBE) working on real tables.
 *
 *   sqlrun SCRIPT.sql [ROWS]
 *
 * Opens an in-memory database, creates the one-row table
 * `config(rows INTEGER)` holding ROWS (default 100000) so that a script can
 * size its data with `(SELECT rows FROM config)`, then runs the script's
 * statements in order. Each row a statement returns is printed as its
 * columns' text separated by '|' (NULL prints as empty), like the sqlite3
 * shell's list mode. Exit status: 0 on success, 1 on an SQL error (message
 * with the script's name and line on stderr), 2 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "sqlrun: %s: cannot open\n", path);
        exit(2);
    }
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "sqlrun: %s: out of memory\n", path);
            exit(2);
        }
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            continue;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* Line number (from 1) of position p in text. */
static int line_of(const char *text, const char *p) {
    int line = 1;
    for (const char *q = text; q < p; q++) line += *q == '\n';
    return line;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: sqlrun SCRIPT.sql [ROWS]\n");
        return 2;
    }
    long rows = 100000;
    if (argc == 3) {
        char *end;
        rows = strtol(argv[2], &end, 10);
        if (*argv[2] == 0 || *end != 0 || rows < 0) {
            fprintf(stderr, "sqlrun: ROWS must be a non-negative integer, got '%s'\n", argv[2]);
            return 2;
        }
    }
    char *script = read_file(argv[1]);
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        fprintf(stderr, "sqlrun: cannot open an in-memory database: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    char setup[128];
    snprintf(setup, sizeof setup, "CREATE TABLE config(rows INTEGER); INSERT INTO config VALUES(%ld);", rows);
    if (sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlrun: setup: %s\n", sqlite3_errmsg(db));
        return 1;
    }

    const char *next = script;
    int status = 0;
    while (*next) {
        sqlite3_stmt *stmt = NULL;
        const char *start = next;
        if (sqlite3_prepare_v2(db, start, -1, &stmt, &next) != SQLITE_OK) {
            fprintf(stderr, "sqlrun: %s:%d: %s\n", argv[1], line_of(script, start), sqlite3_errmsg(db));
            status = 1;
            break;
        }
        if (stmt == NULL) continue; /* whitespace or a comment */
        int cols = sqlite3_column_count(stmt), rc;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            for (int c = 0; c < cols; c++) {
                const unsigned char *v = sqlite3_column_text(stmt, c);
                if (c) putchar('|');
                if (v) fputs((const char *)v, stdout);
            }
            putchar('\n');
        }
        if (rc != SQLITE_DONE) {
            /* Point at the statement's first non-blank line. */
            while (*start == ' ' || *start == '\n' || *start == '\t' || *start == '\r') start++;
            fprintf(stderr, "sqlrun: %s:%d: %s\n", argv[1], line_of(script, start), sqlite3_errmsg(db));
            sqlite3_finalize(stmt);
            status = 1;
            break;
        }
        sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    free(script);
    fflush(stdout);
    return status;
}

/*
 * luarun: a small driver for Lua 5.4 (lua-src ships the library without
 * lua.c), built by workloads/build-real.sh as a real workload for coprof's
 * simulator: an interpreter's dispatch loop, hashing, garbage collection
 * and string handling, all in one program.
 *
 *   luarun SCRIPT.lua [ARGS...]
 *
 * Runs SCRIPT with the standard libraries open and the global table `arg`
 * set as lua.c sets it (arg[0] = SCRIPT, arg[1..] = ARGS); the script's
 * chunk also receives ARGS as `...`. Exit status: 0 when the script ran to
 * its end, 1 on a Lua error (message with traceback on stderr), 2 on a
 * usage error; `os.exit(n)` exits with n.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

/* Message handler: adds a traceback to the error message. */
static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: luarun SCRIPT.lua [ARGS...]\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "luarun: cannot create a Lua state (out of memory)\n");
        return 1;
    }
    luaL_openlibs(L);

    /* The arguments go in with lua_pushlstring, not lua_pushstring: the
     * latter looks a C string up in a cache keyed by the string's address
     * (luaS_new), and argv lies on the stack, whose address differs from
     * one implementation of the system to another (Linux, qemu-user,
     * coprof) and moves with the length of the paths. Which cache slots
     * the arguments then take from the library's own names would change
     * the interpreter's work, not just its addresses. */
    lua_createtable(L, argc - 2, 2);
    for (int i = 1; i < argc; i++) {
        lua_pushlstring(L, argv[i], strlen(argv[i]));
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");

    lua_pushcfunction(L, traceback);
    int handler = lua_gettop(L);
    int status = luaL_loadfile(L, argv[1]);
    if (status == LUA_OK) {
        for (int i = 2; i < argc; i++) lua_pushlstring(L, argv[i], strlen(argv[i]));
        status = lua_pcall(L, argc - 2, 0, handler);
    }
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "luarun: %s\n", msg ? msg : "(error without a message)");
        fflush(stdout);
        lua_close(L);
        return 1;
    }
    fflush(stdout);
    lua_close(L);
    return 0;
}

//! The program a command line names is found as a shell finds it: a name
//! in the program's PATH (looked up under `--sysroot` first, passing over
//! host programs the simulator cannot run), an absolute path under
//! `--sysroot` first, and a `#!` script through its interpreter with
//! Linux's argv.

mod common;

use common::{coprof, stdout_of};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Prints its arguments, `argv[0]` first, one a line.
const ARGV: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}
"#;

/// Replaces itself with `tool`, a relative path without a slash, which
/// `execve` takes in the current directory, never from PATH.
const EXEC_TOOL: &str = r#"
#include <unistd.h>
extern char **environ;
int main(void) {
    char *args[] = {"tool", "e", 0};
    execve("tool", args, environ);
    return 127;
}
"#;

/// Says that it ran.
const WRONG: &str = r#"
#include <stdio.h>
int main(void) { puts("the PATH's tool"); return 0; }
"#;

/// A program of the host coprof runs on, not a RISC-V one (CI runs on
/// x86-64).
const HOST_PROGRAM: &str = "/bin/true";

fn place(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn write_script(to: &Path, text: &str) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, text).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_name_runs_the_risc_v_program_its_path_finds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let argv = common::compile(d, "argv", ARGV);
    place(&argv, &d.join("rv/tool"));
    place(Path::new(HOST_PROGRAM), &d.join("host/tool"));
    write_script(&d.join("shims/tool"), &format!("#!{HOST_PROGRAM}\n"));
    let path = format!(
        "PATH={}:{}:{}",
        d.join("shims").display(),
        d.join("host").display(),
        d.join("rv").display()
    );

    // The host's `tool`s first in PATH, a script of a host interpreter
    // and a host program, are passed over; argv[0] stays as given, as a
    // shell leaves it.
    let out = stdout_of(
        coprof()
            .args(["run", "--env", &path, "--", "tool", "a", "b"])
            .current_dir(d),
    );
    assert_eq!(out, "tool\na\nb\n");
    // Every report command finds it the same way.
    let out = common::succeeded(
        coprof()
            .args(["profile", "--env", &path, "--", "tool", "x"])
            .current_dir(d),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("tool\nx\n"));

    // Not in PATH: the current directory's, last, as valgrind runs it.
    let host_only = format!("PATH={}", d.join("host").display());
    let out = stdout_of(
        coprof()
            .args(["run", "--env", &host_only, "--", "tool", "c"])
            .current_dir(d.join("rv")),
    );
    assert_eq!(out, "tool\nc\n");

    // Nowhere: a clear error that names the program, the PATH searched
    // and the host program passed over.
    let out = coprof()
        .args(["run", "--env", &host_only, "--", "tool"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tool: no RISC-V program"), "{err}");
    assert!(err.contains(&d.join("host").display().to_string()), "{err}");
    assert!(err.contains("(an ELF file for "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn paths_and_scripts_are_looked_up_under_the_sysroot_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sys = d.join("sys");
    let argv = common::compile(d, "argv", ARGV);
    place(&argv, &sys.join("opt/interp"));
    std::fs::create_dir_all(d.join("host")).unwrap();
    let sysroot = sys.display().to_string();

    // An absolute path the host lacks is the sysroot's file, as the
    // program's own execve would find it.
    let out = stdout_of(coprof().args(["run", "--sysroot", &sysroot, "--", "/opt/interp", "z"]));
    assert_eq!(out, "/opt/interp\nz\n");

    // A script runs its interpreter with Linux's argv: the interpreter
    // as written, the line's argument, the script's path, its arguments.
    let script = d.join("host/s.sh");
    write_script(&script, "#!/opt/interp -q\necho not run\n");
    let s = script.display().to_string();
    let out = stdout_of(coprof().args(["run", "--sysroot", &sysroot, "--", &s, "a"]));
    assert_eq!(out, format!("/opt/interp\n-q\n{s}\na\n"));

    // Found in PATH under the sysroot, a script is given its guest path.
    write_script(&sys.join("optbin/s2"), "#!/opt/interp\n");
    let out = stdout_of(coprof().args([
        "run",
        "--sysroot",
        &sysroot,
        "--env",
        "PATH=/optbin",
        "--",
        "s2",
        "b",
    ]));
    assert_eq!(out, "/opt/interp\n/optbin/s2\nb\n");

    // An interpreter that is a host program: named, with the script.
    let bad = d.join("host/bad.sh");
    write_script(&bad, &format!("#!{HOST_PROGRAM}\n"));
    let out = coprof().args(["run", "--"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(
        err.contains(&format!("whose interpreter {HOST_PROGRAM}")),
        "{err}"
    );
    assert!(err.contains("not a RISC-V program"), "{err}");
}

#[test]
fn a_programs_own_execve_of_a_bare_name_is_the_current_directorys_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let argv = common::compile(d, "argv", ARGV);
    let exec = common::compile(d, "exec_tool", EXEC_TOOL);
    let wrong = common::compile(d, "wrong", WRONG);
    place(&argv, &d.join("cwd/tool"));
    place(&wrong, &d.join("bin/tool"));
    let path = format!("PATH={}", d.join("bin").display());
    let out = stdout_of(
        coprof()
            .args(["run", "--env", &path, "--"])
            .arg(&exec)
            .current_dir(d.join("cwd")),
    );
    assert_eq!(out, "tool\ne\n");
}

/// A script whose interpreter is a script runs the innermost interpreter
/// with each level's argv in front, as Linux nests them (binfmt_script,
/// up to five interpreters deep, then ELOOP): on the command line and
/// through the program's own `execve`.
#[test]
fn scripts_whose_interpreter_is_a_script_nest_as_linux_nests_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sys = d.join("sys");
    let sysroot = sys.display().to_string();
    place(&common::compile(d, "argv", ARGV), &sys.join("opt/interp"));
    write_script(&sys.join("opt/inner"), "#!/opt/interp -i\n");
    let outer = d.join("host/outer.sh");
    write_script(&outer, "#!/opt/inner -o\n");
    let o = outer.display().to_string();
    let out = stdout_of(coprof().args(["run", "--sysroot", &sysroot, "--", &o, "a"]));
    assert_eq!(out, format!("/opt/interp\n-i\n/opt/inner\n-o\n{o}\na\n"));

    // The program's own execve of such a script.
    let exec = common::compile(d, "exec_tool", EXEC_TOOL);
    write_script(&d.join("cwd/tool"), "#!/opt/inner -o\n");
    let run = |cwd: &Path| {
        coprof()
            .args(["run", "--sysroot", &sysroot, "--"])
            .arg(&exec)
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    let out = run(&d.join("cwd"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/opt/interp\n-i\n/opt/inner\n-o\ntool\ne\n"
    );

    // Six scripts, each the interpreter of the one before: the command
    // line is refused by name, and the program's execve fails (ELOOP),
    // so it returns 127.
    for level in 1..=5 {
        write_script(
            &sys.join(format!("opt/s{level}")),
            &format!("#!/opt/s{}\n", level + 1),
        );
    }
    write_script(&sys.join("opt/s6"), "#!/opt/interp\n");
    write_script(&d.join("deep/tool"), "#!/opt/s2\n");
    let out = coprof()
        .args(["run", "--sysroot", &sysroot, "--"])
        .arg(d.join("deep/tool"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("more than 5 scripts") && err.contains("ELOOP"),
        "{err}"
    );
    let out = run(&d.join("deep"));
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    // Five run, on the command line and through execve.
    write_script(&d.join("deep/tool"), "#!/opt/s3\n");
    let five = "/opt/interp\n/opt/s6\n/opt/s5\n/opt/s4\n/opt/s3\n";
    let tool = d.join("deep/tool").display().to_string();
    let out = stdout_of(coprof().args(["run", "--sysroot", &sysroot, "--", &tool]));
    assert_eq!(out, format!("{five}{tool}\n"));
    let out = run(&d.join("deep"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{five}tool\ne\n")
    );
}

//! The environment a program run in the simulator starts with: coprof's
//! own, as under qemu-user, changed by `--clear-env`, `--unset NAME` and
//! `--env NAME=VALUE`, in that order (env(1)'s `-i`, `-u` and
//! `NAME=VALUE`; qemu-user's `-U` and `-E`).
//!
//! The environment moves the program's stack: its strings lie at the top
//! of the stack, so one byte more in a variable moves every stack address
//! below them, and with them the values that loads of pointers return. A
//! shell sets `_` to the path of the command it runs, so the same program
//! run by two copies of coprof at different paths sees different
//! addresses, and `--random-seed` alone does not make the runs alike;
//! `--clear-env` (or `--unset _`) does.

use std::ffi::OsString;

/// The options that change a program's environment.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EnvArgs {
    /// With a program: start it with an empty environment instead of
    /// coprof's own, as `env -i` does (--env then adds to it). Runs from
    /// different shells, directories or coprof paths then see the same
    /// stack addresses.
    #[arg(long)]
    pub clear_env: bool,
    /// With a program: remove NAME from its environment (repeatable).
    #[arg(long = "unset", value_name = "NAME", value_parser = parse_name)]
    pub unset: Vec<String>,
    /// With a program: set NAME to VALUE in its environment, in place of
    /// coprof's own value (repeatable; of several for one NAME the last
    /// counts).
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse_assignment)]
    pub set: Vec<String>,
}

/// A variable's name for `--unset`: not empty, without `=` or NUL.
fn parse_name(s: &str) -> Result<String, String> {
    if s.is_empty() || s.contains(['=', '\0']) {
        return Err("expected a variable's name: not empty, without '=' or NUL".into());
    }
    Ok(s.to_string())
}

/// `NAME=VALUE` for `--env`: a name as [`parse_name`] takes, and a value
/// without NUL (which would end the string the program reads).
fn parse_assignment(s: &str) -> Result<String, String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err("expected NAME=VALUE".into());
    };
    parse_name(name)?;
    if value.contains('\0') {
        return Err("the value holds a NUL byte".into());
    }
    Ok(s.to_string())
}

impl EnvArgs {
    /// The program's environment, `NAME=VALUE` strings in order, from
    /// `host`'s variables (coprof's own), byte for byte: the host's order
    /// is kept, a variable set again stays in its place, and new ones
    /// follow in the order given.
    pub fn environment(
        &self,
        host: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<OsString> {
        let mut vars: Vec<(OsString, OsString)> = if self.clear_env {
            Vec::new()
        } else {
            host.into_iter().collect()
        };
        vars.retain(|(k, _)| !self.unset.iter().any(|u| k == u.as_str()));
        for assignment in &self.set {
            let (name, value) = assignment
                .split_once('=')
                .expect("checked by parse_assignment");
            match vars.iter_mut().find(|(k, _)| k == name) {
                Some(var) => var.1 = value.into(),
                None => vars.push((name.into(), value.into())),
            }
        }
        vars.into_iter()
            .map(|(mut k, v)| {
                k.push("=");
                k.push(v);
                k
            })
            .collect()
    }

    /// These options as they would be typed again.
    pub fn options(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = Vec::new();
        if self.clear_env {
            v.push("--clear-env".into());
        }
        for name in &self.unset {
            v.extend(["--unset".into(), name.into()]);
        }
        for assignment in &self.set {
            v.extend(["--env".into(), assignment.into()]);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Vec<(OsString, OsString)> {
        [("HOME", "/root"), ("_", "/usr/bin/coprof"), ("LANG", "C")]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect()
    }

    fn args(clear_env: bool, unset: &[&str], set: &[&str]) -> EnvArgs {
        EnvArgs {
            clear_env,
            unset: unset.iter().map(|s| s.to_string()).collect(),
            set: set.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn without_options_the_program_gets_the_hosts_environment_in_order() {
        assert_eq!(
            EnvArgs::default().environment(host()),
            ["HOME=/root", "_=/usr/bin/coprof", "LANG=C"]
        );
    }

    #[test]
    fn unset_removes_and_env_replaces_in_place_or_adds_at_the_end() {
        let a = args(false, &["_"], &["LANG=C.UTF-8", "A=1", "B=x=y", "A=2"]);
        assert_eq!(
            a.environment(host()),
            ["HOME=/root", "LANG=C.UTF-8", "A=2", "B=x=y"]
        );
    }

    #[test]
    fn clear_env_starts_from_nothing_whatever_the_host_has() {
        let a = args(true, &["HOME"], &["TZ=UTC", "EMPTY="]);
        assert_eq!(a.environment(host()), ["TZ=UTC", "EMPTY="]);
        assert_eq!(a.environment(Vec::new()), ["TZ=UTC", "EMPTY="]);
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_through() {
        use std::os::unix::ffi::OsStringExt;
        let raw = OsString::from_vec(b"\xff\xfe".to_vec());
        let host = vec![
            (OsString::from("RAW"), raw),
            (OsString::from("A"), "1".into()),
        ];
        let env = args(false, &["A"], &[]).environment(host);
        assert_eq!(env.len(), 1);
        assert_eq!(env[0].clone().into_vec(), b"RAW=\xff\xfe");
    }

    #[test]
    fn names_and_assignments_are_checked() {
        assert!(parse_assignment("A=1").is_ok());
        assert!(parse_assignment("A=").is_ok());
        for bad in ["A", "=1", "", "A=\0"] {
            assert!(parse_assignment(bad).is_err(), "{bad:?}");
        }
        assert!(parse_name("PATH").is_ok());
        for bad in ["", "A=1", "A\0"] {
            assert!(parse_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn options_are_typed_again_as_given() {
        let a = args(true, &["_"], &["A=1"]);
        let typed: Vec<String> = a
            .options()
            .into_iter()
            .map(|o| o.into_string().unwrap())
            .collect();
        assert_eq!(typed, ["--clear-env", "--unset", "_", "--env", "A=1"]);
    }
}

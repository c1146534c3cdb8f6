//! Links the C++ runtime whose `__cxa_demangle` names C++ functions (see
//! src/demangle.rs), where the platform has one to link: libstdc++ on
//! Linux and the BSDs, libc++ on macOS. Elsewhere the crate falls back to
//! the `cpp_demangle` crate and says so in `demangle::CPP_DEMANGLER`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cxa_demangle)");
    let lib = match std::env::var("CARGO_CFG_TARGET_OS").as_deref() {
        Ok("linux") | Ok("freebsd") | Ok("netbsd") | Ok("openbsd") => "stdc++",
        Ok("macos") => "c++",
        _ => return,
    };
    println!("cargo:rustc-link-lib=dylib={lib}");
    println!("cargo:rustc-cfg=cxa_demangle");
}

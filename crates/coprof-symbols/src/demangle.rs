//! Mangled names to the names people read.
//!
//! C++ names go through the GNU demangler, the one `c++filt`, `addr2line`,
//! gdb and perf print, as the C++ runtime exports it (`__cxa_demangle` in
//! libstdc++, or libc++ on macOS). The `cpp_demangle` crate, which
//! `addr2line` offers, was measured against `c++filt` on the 4,951 mangled
//! symbols of the corpus's C++ program (`g++ -static -O2`, libstdc++ 12):
//! it rendered 367 of them differently beyond spelling, dropping
//! parameters (`basic_string<wchar_t const*>(wchar_t const*, …)` for
//! `(wchar_t const*, wchar_t const*, …)`) and misplacing references
//! (`__class_type_info&::__upcast_result`), and its 0.4 release could not
//! parse some at all. It remains the fallback on platforms without a C++
//! runtime to link. Rust names go through `rustc-demangle`, without the
//! hash.

use std::borrow::Cow;

/// Which C++ demangler this build uses: `"gnu"` (`__cxa_demangle`) or
/// `"cpp_demangle"` (the fallback crate).
pub const CPP_DEMANGLER: &str = if cfg!(cxa_demangle) {
    "gnu"
} else {
    "cpp_demangle"
};

/// `name` demangled as C++ (an Itanium ABI name, `_Z…`) or Rust (legacy
/// `_ZN…17h…E` or v0 `_R…`), or `None` when it is neither or does not
/// parse. Plain C names are not mangled and give `None`.
///
/// ```
/// use coprof_symbols::demangle::demangle;
/// assert_eq!(
///     demangle("_ZN12_GLOBAL__N_111parse_digitERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEii.cold").as_deref(),
///     Some("(anonymous namespace)::parse_digit(std::__cxx11::basic_string<char, std::char_traits<char>, \
///           std::allocator<char> > const&, int, int) [clone .cold]"),
/// );
/// assert_eq!(demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE").as_deref(),
///            Some("core::ptr::drop_in_place"));
/// assert_eq!(demangle("main"), None);
/// ```
pub fn demangle(name: &str) -> Option<String> {
    if name.starts_with("_R") || is_legacy_rust(name) {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return Some(format!("{d:#}"));
        }
    }
    if name.starts_with("_Z") {
        return demangle_cpp(name);
    }
    None
}

/// `name` demangled when it is mangled, else as it is.
pub fn demangle_or_keep(name: Cow<'_, str>) -> String {
    match demangle(&name) {
        Some(d) => d,
        None => name.into_owned(),
    }
}

/// A legacy Rust name: `_ZN…` ending in a `17h` + 16 hex digits hash
/// segment (optionally with an LLVM suffix after a dot).
fn is_legacy_rust(name: &str) -> bool {
    let Some(body) = name.strip_prefix("_ZN") else {
        return false;
    };
    let body = body.split('.').next().unwrap_or(body);
    body.strip_suffix('E')
        .and_then(|b| b.get(b.len().saturating_sub(19)..))
        .is_some_and(|tail| {
            tail.len() == 19
                && tail.starts_with("17h")
                && tail[3..].bytes().all(|c| c.is_ascii_hexdigit())
        })
}

#[cfg(cxa_demangle)]
fn demangle_cpp(name: &str) -> Option<String> {
    use std::ffi::{c_char, c_int, CStr, CString};
    extern "C" {
        /// The Itanium C++ ABI's demangler (§3.4 of the ABI's runtime
        /// library interface): returns a `malloc`ed string, or null with
        /// a negative `status`.
        fn __cxa_demangle(
            mangled: *const c_char,
            buffer: *mut c_char,
            length: *mut usize,
            status: *mut c_int,
        ) -> *mut c_char;
    }
    let c_name = CString::new(name).ok()?;
    let mut status: c_int = 0;
    // SAFETY: `c_name` is a valid NUL-terminated string for the call's
    // duration; a null buffer and length ask the runtime to allocate the
    // result, which is ours to free.
    let out = unsafe {
        __cxa_demangle(
            c_name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        )
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: a non-null result is a NUL-terminated string allocated with
    // malloc; it is copied before it is freed, once.
    let text = unsafe {
        let text = CStr::from_ptr(out).to_string_lossy().into_owned();
        libc::free(out.cast());
        text
    };
    (status == 0).then_some(text)
}

#[cfg(not(cxa_demangle))]
fn demangle_cpp(name: &str) -> Option<String> {
    addr2line::demangle(name, gimli::DW_LANG_C_plus_plus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_the_fallback_crate_got_wrong_come_out_as_gnu_prints_them() {
        if CPP_DEMANGLER != "gnu" {
            return;
        }
        // c++filt's output for each (binutils 2.40).
        let cases = [
            (
                "_ZNK10__cxxabiv120__si_class_type_info11__do_upcastEPKNS_17__class_type_infoEPKvRNS1_15__upcast_resultE",
                "__cxxabiv1::__si_class_type_info::__do_upcast(__cxxabiv1::__class_type_info const*, void const*, __cxxabiv1::__class_type_info::__upcast_result&) const",
            ),
            (
                "_ZNSbIwSt11char_traitsIwESaIwEEC1IPKwEET_S6_RKS1_",
                "std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::basic_string<wchar_t const*>(wchar_t const*, wchar_t const*, std::allocator<wchar_t> const&)",
            ),
            (
                "_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_",
                "std::enable_if<std::__and_<std::__not_<std::__is_tuple_like<int> >, std::is_move_constructible<int>, std::is_move_assignable<int> >::value, void>::type std::swap<int>(int&, int&)",
            ),
        ];
        for (mangled, want) in cases {
            assert_eq!(demangle(mangled).as_deref(), Some(want), "{mangled}");
        }
    }

    #[test]
    fn plain_and_malformed_names_are_not_demangled() {
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("i"), None, "a type code alone is not a symbol");
        assert_eq!(demangle("_Z"), None);
        assert_eq!(demangle("_ZN3foo"), None);
        assert_eq!(demangle("_Z3foo\0x"), None);
        assert_eq!(
            demangle_or_keep("BZ2_compressBlock".into()),
            "BZ2_compressBlock"
        );
    }

    #[test]
    fn rust_names_lose_their_hash() {
        assert!(is_legacy_rust("_ZN3std2rt10lang_start17h0123456789abcdefE"));
        assert!(!is_legacy_rust("_ZN3std2rt10lang_startE"));
        assert_eq!(
            demangle("_ZN3std2rt10lang_start17h0123456789abcdefE").as_deref(),
            Some("std::rt::lang_start")
        );
        assert_eq!(
            demangle("_RNvCs1234_7mycrate3foo").as_deref(),
            Some("mycrate::foo")
        );
    }
}

//! coprof-symbols: program counters to function, file and line.
//!
//! Profiles speak in PCs; people read functions and source lines. This crate
//! turns the PCs that coprof's engines report into names, the way DCPI's
//! `dcpiprof`/`dcpilist` tools did for their samples (Anderson et al.,
//! "Continuous Profiling: Where Have All the Cycles Gone?", SOSP 1997, §2;
//! value sampling in Burrows et al., ASPLOS 2000, §5 prints the same
//! annotated listings). It knows nothing of the simulator or the engines:
//! only of ELF files and addresses.
//!
//! - [`Symbolizer::lookup`]: function, file, line and the chain of inlined
//!   frames for one PC, from the ELF's DWARF (via `addr2line`, `gimli` and
//!   `object`; a stripped binary's separate debug file is found by build
//!   ID or debug link, and a supplementary `dwz` file by its link, [`debug_file`];
//!   split DWARF's `.dwo` files and packages, [`split_dwarf`]), falling back to the Go runtime's table for Go code
//!   ([`gopclntab`]: function, file and line), to the ELF symbol table
//!   (function + offset) and then to the raw address; [`Location::source`] says which, and
//!   [`Quality::note`] gives the sentence a report prints. Functions are
//!   named by their demangled linkage names ([`demangle`]: C++ by the GNU
//!   demangler, Rust by `rustc-demangle`), or, for C++ functions without
//!   one, by their names qualified with the scopes around them.
//! - [`Symbolizer::span`]: a loop body `[lo, hi]` as the source lines of all
//!   its instructions (one `file:first-last` per file).
//! - [`Symbolizer::disassemble`]: the instruction at a PC as text (RISC-V
//!   with coprof-rv's decoder, x86-64 with `iced-x86`), and
//!   [`Symbolizer::source_line_text`]: the source line itself, and
//!   [`Symbolizer::listing`]: a range's instructions beside their source
//!   lines, `dcpilist`-style.
//!
//! Results are cached per PC, so symbolizing the same few thousand PCs again
//! (one report per engine) costs a hash look-up each.
//!
//! ```no_run
//! use coprof_symbols::Symbolizer;
//! let sym = Symbolizer::open("prog".as_ref()).unwrap();
//! let loc = sym.lookup(0x10a3c);
//! println!("{loc}   {}", loc.inlined_chain());
//! if let Some(note) = loc.source.note() {
//!     println!("note: {note}");
//! }
//! ```

#![warn(missing_docs)]

pub mod arch;
pub mod debug_file;
pub mod demangle;
pub mod disasm;
pub mod dwarf;
pub mod error;
mod go_inline;
pub mod gopclntab;
pub mod listing;
pub mod location;
mod names;
pub mod plt;
pub mod riscv_addresses;
pub mod source;
pub mod span;
pub mod split_dwarf;
pub mod symbolizer;
pub mod symtab;

pub use arch::Arch;
pub use disasm::Disassembly;
pub use error::SymbolError;
pub use listing::{Listing, ListingRow};
pub use location::{Frame, Location, Quality};
pub use span::{FileLines, SourceSpan};
pub use symbolizer::{DebugInfo, Symbolizer};

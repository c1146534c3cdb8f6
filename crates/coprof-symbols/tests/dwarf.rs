//! Symbolization from DWARF of real compiler output, for both instruction
//! sets: function names, file:line of marked source lines, the inlined
//! frame of a `static inline` helper at -O2, the source span of a loop, and
//! the disassembly beside the source line (an annotated listing in the
//! manner of DCPI's `dcpilist`).

mod common;

use common::{
    answers_beside, build, c_line, ensure_tool, find_loop, h_line, instructions, mnemonic, run,
    same_frames, Built, Target,
};
use coprof_symbols::{Location, Quality, Symbolizer};
use std::ffi::OsStr;
use std::path::PathBuf;

fn ends_with(file: &Option<String>, name: &str) -> bool {
    file.as_deref()
        .is_some_and(|f| f.ends_with(&format!("/{name}")))
}

/// Every PC of `name` symbolized.
fn locations(sym: &coprof_symbols::Symbolizer, name: &str) -> Vec<Location> {
    instructions(sym, name)
        .iter()
        .map(|d| sym.lookup(d.pc))
        .collect()
}

fn names_functions_and_marked_lines(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    assert!(sym.debug_info().dwarf, "{:?}", sym.debug_info());
    assert_eq!(sym.debug_info().note(), None);

    let locs = locations(&sym, "sum_scaled");
    for l in &locs {
        assert_eq!(l.source, Quality::Dwarf, "{l:?}");
        assert_eq!(l.outer_function(), Some("sum_scaled"), "{l:?}");
    }
    let body = c_line("loop_body");
    let hit = locs
        .iter()
        .find(|l| l.function.as_deref() == Some("sum_scaled") && l.line == Some(body))
        .unwrap_or_else(|| panic!("no PC of sum_scaled on symtest.c:{body}: {locs:#?}"));
    assert!(ends_with(&hit.file, "symtest.c"), "{hit:?}");
    assert!(hit.inlined.is_empty());
    assert_eq!(hit.to_string(), format!("sum_scaled (symtest.c:{body})"));
    assert_eq!(
        format!("{hit:#}"),
        format!("sum_scaled ({}:{body})", b.source.display())
    );

    let call = c_line("call");
    let main = locations(&sym, "main");
    assert!(
        main.iter()
            .all(|l| l.outer_function() == Some("main") && ends_with(&l.file, "symtest.c")),
        "{main:#?}"
    );
    assert!(
        main.iter().any(|l| l.line == Some(call)),
        "no PC of main on symtest.c:{call}: {main:#?}"
    );
}

#[test]
fn riscv_functions_and_lines() {
    names_functions_and_marked_lines(Target::Riscv64);
}

#[test]
fn x86_64_functions_and_lines() {
    names_functions_and_marked_lines(Target::X86_64);
}

fn inlined_helper_has_its_call_site(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let locs = locations(&sym, "sum_scaled");
    let inl = locs
        .iter()
        .find(|l| l.function.as_deref() == Some("scale"))
        .unwrap_or_else(|| panic!("no PC of sum_scaled inside the inlined scale: {locs:#?}"));
    assert!(ends_with(&inl.file, "scale.h"), "{inl:?}");
    assert_eq!(inl.line, Some(h_line("scale")));
    assert_eq!(inl.inlined.len(), 1, "{inl:?}");
    let caller = &inl.inlined[0];
    assert_eq!(caller.function.as_deref(), Some("sum_scaled"));
    assert!(ends_with(&caller.file, "symtest.c"), "{caller:?}");
    assert_eq!(caller.line, Some(c_line("loop_body")));
    assert_eq!(
        inl.inlined_chain().to_string(),
        format!(
            "scale (scale.h:{}) inlined into sum_scaled (symtest.c:{})",
            h_line("scale"),
            c_line("loop_body")
        )
    );
}

#[test]
fn riscv_inlined_frames() {
    inlined_helper_has_its_call_site(Target::Riscv64);
}

#[test]
fn x86_64_inlined_frames() {
    inlined_helper_has_its_call_site(Target::X86_64);
}

fn loop_span_is_its_source_lines(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let (lo, hi) = find_loop(&sym, target, "sum_scaled");
    let span = sym.span(lo, hi);
    assert_eq!(span.source, Quality::Dwarf);
    assert_eq!(span.function.as_deref(), Some("sum_scaled"));
    let (head, body, helper) = (c_line("loop_head"), c_line("loop_body"), h_line("scale"));
    assert_eq!(span.files.len(), 2, "{span:#?}");
    let (file, first, last) = span.primary().unwrap();
    assert_eq!(file, b.source.to_str().unwrap());
    assert_eq!((first, last), (head, body), "{span:#?}");
    assert_eq!(span.files[1].file, b.header.to_str().unwrap());
    assert_eq!(span.files[1].lines, vec![helper]);
    assert_eq!(
        span.to_string(),
        format!("symtest.c:{head}-{body}, scale.h:{helper}")
    );
    // The order of the bounds does not matter.
    assert_eq!(sym.span(hi, lo), span);
}

/// A range wholly inside the inlined helper is named after the helper,
/// as each of its PCs is, with the helper's file first; one that reaches
/// into the caller's own code is the caller's.
fn span_inside_inlined_code_is_the_inlined_function(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let locs = locations(&sym, "sum_scaled");
    let pcs: Vec<u64> = instructions(&sym, "sum_scaled")
        .iter()
        .map(|d| d.pc)
        .collect();
    let first = locs
        .iter()
        .position(|l| l.function.as_deref() == Some("scale"))
        .unwrap_or_else(|| panic!("no PC inside the inlined scale: {locs:#?}"));
    let run = locs[first..]
        .iter()
        .take_while(|l| l.function.as_deref() == Some("scale"))
        .count();
    let (lo, hi) = (pcs[first], pcs[first + run - 1]);
    let span = sym.span(lo, hi);
    assert_eq!(span.function.as_deref(), Some("scale"), "{span:#?}");
    assert_eq!(span.files[0].file, b.header.to_str().unwrap(), "{span:#?}");
    // The caller's instruction after the helper's, or before it.
    let outside = if first + run < pcs.len() {
        sym.span(lo, pcs[first + run])
    } else {
        sym.span(pcs[first - 1], hi)
    };
    assert_eq!(
        outside.function.as_deref(),
        Some("sum_scaled"),
        "{outside:#?}"
    );
}

#[test]
fn riscv_span_inside_inlined_code() {
    span_inside_inlined_code_is_the_inlined_function(Target::Riscv64);
}

#[test]
fn x86_64_span_inside_inlined_code() {
    span_inside_inlined_code_is_the_inlined_function(Target::X86_64);
}

#[test]
fn riscv_loop_span() {
    loop_span_is_its_source_lines(Target::Riscv64);
}

#[test]
fn x86_64_loop_span() {
    loop_span_is_its_source_lines(Target::X86_64);
}

/// A loop body's length in instructions, counted in the code, is the
/// number of instructions a disassembly walk finds between the branch's
/// target and the branch; a range that does not end on an instruction, or
/// lies outside the code, has none.
fn loop_body_counts_its_instructions(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let (lo, hi) = find_loop(&sym, target, "sum_scaled");
    let body: Vec<_> = instructions(&sym, "sum_scaled")
        .into_iter()
        .filter(|d| (lo..=hi).contains(&d.pc))
        .collect();
    assert!(body.len() >= 3, "{body:#?}");
    assert_eq!(sym.instructions_in(lo, hi), Some(body.len() as u64));
    assert_eq!(sym.instructions_in(lo, lo), Some(1));
    // The address difference over 4 is right only when every instruction
    // of the body is 4 bytes long.
    let by_distance = (hi - lo) / 4 + 1;
    if body.iter().all(|d| d.bytes.len() == 4) {
        assert_eq!(by_distance, body.len() as u64);
    } else {
        assert_ne!(by_distance, body.len() as u64, "{body:#?}");
    }
    // One byte into the branch is not where an instruction starts.
    assert_eq!(sym.instructions_in(lo, hi + 1), None);
    assert_eq!(sym.instructions_in(hi, lo), None);
    assert_eq!(sym.instructions_in(0x10, 0x40), None, "no code there");
}

#[test]
fn riscv_loop_body_instructions() {
    loop_body_counts_its_instructions(Target::Riscv64);
}

#[test]
fn x86_64_loop_body_instructions() {
    loop_body_counts_its_instructions(Target::X86_64);
}

/// The loop's load of `a[i]` is disassembled with the expected mnemonic
/// and sits beside the source line it came from (the inlined helper's).
fn annotated_listing_of_the_loop(target: Target, is_load: fn(&str) -> bool) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let (lo, hi) = find_loop(&sym, target, "sum_scaled");
    let body: Vec<_> = instructions(&sym, "sum_scaled")
        .into_iter()
        .filter(|d| (lo..=hi).contains(&d.pc))
        .collect();
    let loads: Vec<_> = body.iter().filter(|d| is_load(&d.text)).collect();
    assert_eq!(loads.len(), 1, "one load of a[i] in the loop: {body:#?}");
    let loc = sym.lookup(loads[0].pc);
    let text = sym
        .source_line_text(loc.file.as_deref().unwrap(), loc.line.unwrap())
        .expect("the source file is readable");
    assert!(text.contains("MARK:scale"), "{loc} shows {text:?}");
    let branch = sym.disassemble(hi).unwrap();
    assert!(target.is_branch(&branch.text), "{branch:?}");
    let (start, end) = sym.function_range("sum_scaled").unwrap();
    let listed: usize = instructions(&sym, "sum_scaled")
        .iter()
        .map(|d| d.bytes.len())
        .sum();
    assert_eq!(listed as u64, end - start, "instructions tile the function");
}

#[test]
fn riscv_disassembly_beside_source() {
    annotated_listing_of_the_loop(Target::Riscv64, |t| mnemonic(t) == "lw");
}

#[test]
fn x86_64_disassembly_beside_source() {
    annotated_listing_of_the_loop(Target::X86_64, |t| {
        mnemonic(t) == "mov" && t.contains(",%e") && t.contains("(%")
    });
}

/// The address of the global symbol `name` of `b`, read with `object`
/// rather than the symbolizer under test.
fn global_address(b: &Built, name: &str) -> u64 {
    use object::{Object, ObjectSymbol};
    let bytes = std::fs::read(&b.binary).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let symbol = file
        .symbols()
        .find(|s| s.name() == Ok(name) && s.is_global());
    symbol
        .unwrap_or_else(|| panic!("{} has the global {name}", b.binary.display()))
        .address()
}

/// A direct call names the function it calls, as `objdump -d` does:
/// `main`'s call of the function it does not inline.
fn call_names_its_callee(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let (callee, _) = sym.function_range("sum_scaled").unwrap();
    let calls: Vec<String> = instructions(&sym, "main")
        .into_iter()
        .filter(|d| d.target == Some(callee))
        .map(|d| d.text)
        .collect();
    assert_eq!(calls.len(), 1, "main calls sum_scaled once: {calls:?}");
    let expected = format!("{callee:#x} <sum_scaled>");
    assert!(calls[0].ends_with(&expected), "{}: {expected}", calls[0]);
}

#[test]
fn riscv_call_names_its_callee() {
    call_names_its_callee(Target::Riscv64);
}

#[test]
fn x86_64_call_names_its_callee() {
    call_names_its_callee(Target::X86_64);
}

/// An x86-64 RIP-relative operand reads as objdump prints it: the
/// displacement from `%rip`, then the address it comes to and the data
/// object there (`lea 0x2ee5(%rip),%rax # 0x4040 <data>`). Printed as
/// the address alone (`lea 0x4040,%rax`) it would read, in AT&T syntax,
/// as an absolute address, another instruction.
#[test]
fn x86_64_rip_relative_operands_name_their_data() {
    let b = build(Target::X86_64, &["-g"]);
    let data = global_address(&b, "data");
    let sym = b.open();
    let uses: Vec<_> = instructions(&sym, "main")
        .into_iter()
        .filter(|d| d.target == Some(data))
        .collect();
    assert!(!uses.is_empty(), "main addresses `data`");
    for d in uses {
        let (operands, comment) = d.text.split_once(" # ").expect("a comment");
        assert!(operands.contains("(%rip)"), "{}", d.text);
        assert_eq!(comment, format!("{data:#x} <data>"));
        // The displacement is the distance from the next instruction.
        let disp = operands.split("(%rip)").next().unwrap();
        let disp = disp.rsplit([' ', ',']).next().unwrap();
        let disp = i64::from_str_radix(disp.trim_start_matches("0x"), 16).unwrap();
        let next = d.pc + d.bytes.len() as u64;
        assert_eq!(next.wrapping_add_signed(disp), data, "{}", d.text);
    }
}

/// A RISC-V instruction that reaches a global through `gp` or an
/// `auipc`'s register names it too (`addi a5, gp, -1984 # 0x773f8
/// <data>`): what a load of a global reads is then in its text.
#[test]
fn riscv_register_relative_addresses_name_their_data() {
    let b = build(Target::Riscv64, &["-g"]);
    let data = global_address(&b, "data");
    let sym = b.open();
    let uses: Vec<String> = instructions(&sym, "main")
        .into_iter()
        .filter(|d| d.target == Some(data))
        .map(|d| d.text)
        .collect();
    assert!(!uses.is_empty(), "main addresses `data`");
    for text in uses {
        assert!(text.ends_with(&format!(" # {data:#x} <data>")), "{text}");
    }
}

/// Statically linked C library code has no DWARF in this build: those PCs
/// fall back to the symbol table while the program's own code has lines.
#[test]
fn riscv_libc_code_falls_back_per_pc() {
    let b = build(Target::Riscv64, &["-g"]);
    let sym = b.open();
    let (start, _) = sym.function_range("memset").expect("memset is linked");
    let l = sym.lookup(start + 2);
    assert_eq!(l.source, Quality::Symbols, "{l:?}");
    assert_eq!(l.to_string(), "memset+0x2");
    assert!(l.source.note().is_some());
}

#[test]
fn cache_answers_repeated_pcs_identically() {
    let b = build(Target::Riscv64, &["-g"]);
    let sym = b.open();
    let pcs: Vec<u64> = instructions(&sym, "sum_scaled")
        .iter()
        .map(|d| d.pc)
        .collect();
    let first: Vec<Location> = pcs.iter().map(|&pc| sym.lookup(pc)).collect();
    assert_eq!(sym.cached(), pcs.len());
    let again: Vec<Location> = pcs.iter().map(|&pc| sym.lookup(pc)).collect();
    assert_eq!(sym.cached(), pcs.len(), "no new entries for repeated PCs");
    assert_eq!(first, again);
    let fresh: Vec<Location> = pcs.iter().map(|&pc| sym.lookup_uncached(pc)).collect();
    assert_eq!(first, fresh);
    assert!(sym.bytes() > 0);
}

/// A loop's annotated listing: every instruction from the loop's target to
/// its branch, each under the source line it came from, with that line's
/// text read from the source file.
fn loop_listing(target: Target) {
    let b = build(target, &["-g"]);
    let sym = b.open();
    let (lo, hi) = find_loop(&sym, target, "sum_scaled");
    let listing = sym.listing(hi, lo);
    assert!(!listing.truncated);
    let pcs: Vec<u64> = listing.rows.iter().map(|r| r.insn.pc).collect();
    let expected: Vec<u64> = instructions(&sym, "sum_scaled")
        .iter()
        .map(|d| d.pc)
        .filter(|pc| (lo..=hi).contains(pc))
        .collect();
    assert_eq!(pcs, expected);
    for r in &listing.rows {
        assert_eq!(r.location, sym.lookup(r.insn.pc));
        let text = r.source_text.as_deref().expect("every loop line has text");
        assert!(
            text.contains("MARK:loop_head")
                || text.contains("MARK:loop_body")
                || text.contains("MARK:scale"),
            "{r:?}"
        );
    }
    let shown = listing.to_string();
    let helper = format!("scale.h:{}  return x * 3 + 7;", h_line("scale"));
    assert!(shown.contains(&helper), "{shown}");
    let branch = listing.rows.last().unwrap();
    assert!(
        shown.contains(&format!("{:x}:", branch.insn.pc)) && shown.contains(&branch.insn.text),
        "{shown}"
    );
    // Past the end of the code the listing stops and says so.
    let end = sym.code_ranges().iter().map(|r| r.1).max().unwrap();
    let tail = sym.listing(end - 2, end + 64);
    assert!(tail.truncated);
}

#[test]
fn riscv_loop_listing() {
    loop_listing(Target::Riscv64);
}

#[test]
fn x86_64_loop_listing() {
    loop_listing(Target::X86_64);
}

/// Compressed debug sections (`SHF_COMPRESSED`) give the same answers as
/// uncompressed ones: zlib, as `-gz` writes them, and Zstandard, as
/// `objcopy --compress-debug-sections=zstd` does (GCC 12 has no
/// `-gz=zstd`).
fn compressed_debug_sections(target: Target) {
    let plain = build(target, &["-g"]);
    let packed = build(target, &["-g", "-gz"]);
    let zstd = plain.binary.with_extension("zstd");
    let args = [
        OsStr::new("--compress-debug-sections=zstd"),
        plain.binary.as_os_str(),
        zstd.as_os_str(),
    ];
    run(None, &target.tool("objcopy"), args);
    let a = plain.open();
    for b in [packed.open(), Symbolizer::open(&zstd).unwrap()] {
        assert!(b.debug_info().dwarf, "{:?}", b.debug_info());
        for (_, x, y) in answers_beside(&a, &b) {
            assert_eq!(y.source, Quality::Dwarf);
            assert_eq!(
                (x.function, x.line, x.inlined.len()),
                (y.function, y.line, y.inlined.len())
            );
        }
    }
}

#[test]
fn riscv_compressed_debug_sections() {
    compressed_debug_sections(Target::Riscv64);
}

#[test]
fn x86_64_compressed_debug_sections() {
    compressed_debug_sections(Target::X86_64);
}

/// The base name of a location's file.
fn base(l: &Location) -> Option<&str> {
    l.file.as_deref().and_then(|f| f.rsplit('/').next())
}

/// The `.dwo` files a build left in its directory.
fn dwo_files(b: &Built) -> Vec<PathBuf> {
    let dir = b.binary.parent().unwrap();
    let dwo: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dwo"))
        .collect();
    assert_eq!(
        dwo.len(),
        1,
        "one .dwo beside {}: {dwo:?}",
        b.binary.display()
    );
    dwo
}

/// Split DWARF (`-gsplit-dwarf`, DWARF 5): the binary keeps a skeleton
/// unit and the line table; the functions and inlined frames are in a
/// `.dwo` file beside the object. With the `.dwo` in place every PC gets
/// the answer of a build with the DWARF in the binary.
#[test]
fn x86_64_split_dwarf() {
    let plain = build(Target::X86_64, &["-g"]);
    let split = build(Target::X86_64, &["-g", "-gsplit-dwarf"]);
    let sym = split.open();
    assert!(sym.debug_info().dwarf, "{:?}", sym.debug_info());
    assert_eq!(sym.debug_info().split_units, 1);
    assert_eq!(sym.debug_info().note(), None, "{:?}", sym.debug_info());
    same_frames(&plain.open(), &sym);
}

/// GCC 12 writes RISC-V `.dwo` files whose functions have a length of 0
/// (`DW_AT_high_pc`: the length is a difference of labels that linker
/// relaxation may change, left to a relocation that the `.dwo`, never
/// linked, does not get), so no frame of theirs covers a PC. Each PC still
/// gets its line from the skeleton's line table, and its function from
/// the symbol table.
#[test]
fn riscv_split_dwarf_gives_lines() {
    let plain = build(Target::Riscv64, &["-g"]);
    let split = build(Target::Riscv64, &["-g", "-gsplit-dwarf"]);
    let sym = split.open();
    dwo_files(&split);
    assert_eq!(sym.debug_info().split_units, 1);
    assert_eq!(sym.debug_info().note(), None, "{:?}", sym.debug_info());
    for (pc, x, y) in answers_beside(&plain.open(), &sym) {
        assert_eq!((base(&x), x.line), (base(&y), y.line), "at {pc:#x}");
        assert_eq!(y.outer_function(), Some("sum_scaled"), "at {pc:#x}");
    }
}

/// A `.dwo` that is gone: the lines are still the skeleton's, and the
/// note names the file. `dwarf` is the DWARF version's option.
fn x86_64_split_dwarf_without_its_dwo_file(dwarf: &str) {
    let plain = build(Target::X86_64, &["-g"]);
    let split = build(Target::X86_64, &["-g", dwarf, "-gsplit-dwarf"]);
    let dwo = dwo_files(&split);
    assert_eq!(split.open().debug_info().split_units, 1, "{dwarf}");
    std::fs::remove_file(&dwo[0]).unwrap();
    let sym = split.open();
    let note = sym
        .debug_info()
        .note()
        .expect("a note for the missing .dwo");
    assert!(
        note.contains(&format!("split DWARF file {} not found", dwo[0].display())),
        "{note}"
    );
    assert!(note.contains("(1 of 1 units)"), "{note}");
    for (pc, x, y) in answers_beside(&plain.open(), &sym) {
        assert_eq!(y.source, Quality::Dwarf, "{y:?}");
        assert_eq!((base(&x), x.line), (base(&y), y.line), "at {pc:#x}");
    }
    assert_eq!(sym.split_files().absent[0], dwo[0]);
}

#[test]
fn x86_64_split_dwarf_5_without_its_dwo_file() {
    x86_64_split_dwarf_without_its_dwo_file("-gdwarf-5");
}

/// GCC's DWARF 4 extension marks a skeleton only in its first entry
/// (`DW_AT_GNU_dwo_id`): its missing `.dwo` is noted too.
#[test]
fn x86_64_split_dwarf_4_without_its_dwo_file() {
    x86_64_split_dwarf_without_its_dwo_file("-gdwarf-4");
}

/// A build moved elsewhere whole: the `.dwo` is not under the
/// compilation directory its unit names, but beside the binary.
#[test]
fn x86_64_split_dwarf_beside_a_moved_binary() {
    let plain = build(Target::X86_64, &["-g"]);
    let split = build(Target::X86_64, &["-g", "-gsplit-dwarf"]);
    let dwo = dwo_files(&split);
    let moved = tempfile::tempdir().unwrap();
    let binary = moved.path().join("symtest");
    std::fs::copy(&split.binary, &binary).unwrap();
    std::fs::rename(&dwo[0], moved.path().join(dwo[0].file_name().unwrap())).unwrap();
    let sym = Symbolizer::open(&binary).unwrap();
    assert_eq!(sym.debug_info().note(), None, "{:?}", sym.debug_info());
    same_frames(&plain.open(), &sym);
}

/// A DWARF package (`PACKER -e BINARY`, `BINARY.dwp` beside it) stands
/// for the `.dwo` files it packs, which are then removed: every PC gets
/// the answer of a build with the DWARF in the binary, and no note says a
/// file is missing. `dwarf` is the DWARF version's option.
fn x86_64_split_dwarf_from_a_package(dwarf: &str, packer: &str) {
    ensure_tool(packer);
    let plain = build(Target::X86_64, &["-g"]);
    let split = build(Target::X86_64, &["-g", dwarf, "-gsplit-dwarf"]);
    let dwo = dwo_files(&split);
    let dwp = coprof_symbols::split_dwarf::package_path(&split.binary);
    run(
        None,
        packer,
        [
            OsStr::new("-e"),
            split.binary.as_os_str(),
            OsStr::new("-o"),
            dwp.as_os_str(),
        ],
    );
    std::fs::remove_file(&dwo[0]).unwrap();
    let sym = split.open();
    assert_eq!(sym.debug_info().note(), None, "{:?}", sym.debug_info());
    same_frames(&plain.open(), &sym);
    assert!(
        sym.split_files().read.contains(&dwp),
        "{:?}",
        sym.split_files()
    );
}

/// binutils' `dwp` packs DWARF 4 only: GCC's split DWARF extension to it
/// (`DW_AT_GNU_dwo_id`, the GNU package index, version 2).
#[test]
fn x86_64_split_dwarf_4_from_a_package() {
    x86_64_split_dwarf_from_a_package("-gdwarf-4", "dwp");
}

/// LLVM's `llvm-dwp` packs DWARF 5 (`DW_UT_skeleton` units, the standard
/// package index of DWARF 5, §7.3.5), which binutils' `dwp` cannot.
#[test]
fn x86_64_split_dwarf_5_from_a_package() {
    x86_64_split_dwarf_from_a_package("-gdwarf-5", "llvm-dwp");
}

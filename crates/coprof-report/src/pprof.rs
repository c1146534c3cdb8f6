//! A [`PcProfile`] as a pprof profile: the `perftools.profiles.Profile`
//! message of pprof's `profile.proto`, gzipped, which `go tool pprof`
//! reads.
//!
//! Each PC is one location at its address, in the mapping of the file it
//! lies in, with its source lines innermost first (an inlined function's
//! line, then the line in its caller: pprof's `Line` order), and one
//! sample whose stack is that location alone and whose values are the
//! PC's costs. Functions are pprof's by name and file. The mappings say
//! that functions, files, lines and inlined frames are already given, so
//! that pprof does not look for the binaries to symbolize again.

use crate::pc_profile::{frames, PcProfile};
use prost::Message;
use std::collections::HashMap;
use std::io::{self, Write};

/// The messages of `profile.proto` that coprof writes, with their field
/// numbers (declared here with prost's derive: no `.proto` file and no
/// `protoc` in the build). Fields coprof never sets are left out; a
/// reader sees them as absent.
pub mod proto {
    /// `perftools.profiles.Profile`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Profile {
        #[prost(message, repeated, tag = "1")]
        pub sample_type: Vec<ValueType>,
        #[prost(message, repeated, tag = "2")]
        pub sample: Vec<Sample>,
        #[prost(message, repeated, tag = "3")]
        pub mapping: Vec<Mapping>,
        #[prost(message, repeated, tag = "4")]
        pub location: Vec<Location>,
        #[prost(message, repeated, tag = "5")]
        pub function: Vec<Function>,
        /// Every string, by index; the first is always "".
        #[prost(string, repeated, tag = "6")]
        pub string_table: Vec<String>,
        /// Free text shown by `pprof -comments`, as string indices.
        #[prost(int64, repeated, tag = "13")]
        pub comment: Vec<i64>,
        /// The sample type shown by default, as a string index.
        #[prost(int64, tag = "14")]
        pub default_sample_type: i64,
    }

    /// `ValueType`: a sample type and its unit, as string indices.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueType {
        #[prost(int64, tag = "1")]
        pub r#type: i64,
        #[prost(int64, tag = "2")]
        pub unit: i64,
    }

    /// `Sample`: a stack of locations, leaf first, its values and its
    /// labels.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sample {
        #[prost(uint64, repeated, tag = "1")]
        pub location_id: Vec<u64>,
        #[prost(int64, repeated, tag = "2")]
        pub value: Vec<i64>,
        #[prost(message, repeated, tag = "3")]
        pub label: Vec<Label>,
    }

    /// `Label`: a key (a string index) and a number, as `pprof -tags`
    /// lists them and `-tagfocus` and `-tagroot` take them.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Label {
        #[prost(int64, tag = "1")]
        pub key: i64,
        /// A text value, as an index in the strings (0 for none).
        #[prost(int64, tag = "2")]
        pub str: i64,
        #[prost(int64, tag = "3")]
        pub num: i64,
    }

    /// `Mapping`: a file's code in the process's memory.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Mapping {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub memory_start: u64,
        #[prost(uint64, tag = "3")]
        pub memory_limit: u64,
        #[prost(uint64, tag = "4")]
        pub file_offset: u64,
        #[prost(int64, tag = "5")]
        pub filename: i64,
        #[prost(int64, tag = "6")]
        pub build_id: i64,
        #[prost(bool, tag = "7")]
        pub has_functions: bool,
        #[prost(bool, tag = "8")]
        pub has_filenames: bool,
        #[prost(bool, tag = "9")]
        pub has_line_numbers: bool,
        #[prost(bool, tag = "10")]
        pub has_inline_frames: bool,
    }

    /// `Location`: an instruction address and its source lines.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Location {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub mapping_id: u64,
        #[prost(uint64, tag = "3")]
        pub address: u64,
        #[prost(message, repeated, tag = "4")]
        pub line: Vec<Line>,
    }

    /// `Line`: a function and a line in it.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Line {
        #[prost(uint64, tag = "1")]
        pub function_id: u64,
        #[prost(int64, tag = "2")]
        pub line: i64,
    }

    /// `Function`: names and source file, as string indices.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Function {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(int64, tag = "2")]
        pub name: i64,
        #[prost(int64, tag = "3")]
        pub system_name: i64,
        #[prost(int64, tag = "4")]
        pub filename: i64,
        #[prost(int64, tag = "5")]
        pub start_line: i64,
    }
}

/// The string table: each string once, by index.
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        Strings {
            table: vec![String::new()],
            index: HashMap::from([(String::new(), 0)]),
        }
    }

    fn put(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// `p` as a pprof message. `comments` are shown by `pprof -comments`.
pub fn profile(p: &PcProfile, comments: &[String]) -> proto::Profile {
    let mut samples = Vec::new();
    let mut out = build(p, comments, |s| samples.push(s.clone()));
    out.sample = samples;
    out
}

/// `p` as a pprof message but its samples, which are handed to
/// `sample` one at a time as they are made, each stack a PC's location
/// and then the call sites open in its context, innermost first. The
/// message's other parts (the locations, functions and strings the
/// samples name) are complete only once every sample is.
fn build(
    p: &PcProfile,
    comments: &[String],
    mut sample: impl FnMut(&proto::Sample),
) -> proto::Profile {
    let mut strings = Strings::new();
    let sample_type: Vec<proto::ValueType> = p
        .costs
        .iter()
        .map(|c| proto::ValueType {
            r#type: strings.put(&c.sample_type),
            unit: strings.put(&c.unit),
        })
        .collect();
    let mut out = proto::Profile {
        // The last, as pprof takes it by default: a CPU profile's time.
        default_sample_type: sample_type.last().map_or(0, |t| t.r#type),
        sample_type,
        ..proto::Profile::default()
    };
    out.mapping = mappings(p, &mut strings);
    let mut locations = Locations::default();
    // One sample, filled again for each (context, PC) or PC.
    let mut one = proto::Sample::default();
    // The labels' keys, put in the strings when a sample first has one.
    let (mut thread, mut thread_name) = (None, None);
    if p.has_calls() {
        for c in &p.context_costs {
            if refill(&mut one, &c.values) {
                if let Some(tid) = c.thread {
                    one.label.push(proto::Label {
                        key: *thread.get_or_insert_with(|| strings.put("thread")),
                        num: tid as i64,
                        ..proto::Label::default()
                    });
                    if let Some(name) = p.thread_names.get(&tid) {
                        one.label.push(proto::Label {
                            key: *thread_name.get_or_insert_with(|| strings.put("thread_name")),
                            str: strings.put(name),
                            ..proto::Label::default()
                        });
                    }
                }
                let stack = std::iter::once(c.pc).chain(p.call_stack(c.context));
                for i in stack {
                    let id = locations.id(i, p, &mut out, &mut strings);
                    one.location_id.push(id);
                }
                sample(&one);
            }
        }
    } else {
        for (i, pc) in p.pcs.iter().enumerate() {
            if refill(&mut one, &pc.values) {
                let id = locations.id(i, p, &mut out, &mut strings);
                one.location_id.push(id);
                sample(&one);
            }
        }
    }
    out.comment = comments.iter().map(|c| strings.put(c)).collect();
    out.string_table = strings.table;
    out
}

/// Empties `one` for a sample of `values`, or false when they are all
/// zero: a cost the profile does not show.
fn refill(one: &mut proto::Sample, values: &[u64]) -> bool {
    if values.iter().all(|&v| v == 0) {
        return false;
    }
    one.value.clear();
    one.value.extend(values.iter().map(|&v| v as i64));
    one.location_id.clear();
    one.label.clear();
    true
}

/// The locations written so far, by PC, and the functions by name and
/// file.
#[derive(Default)]
struct Locations {
    of_pc: HashMap<usize, u64>,
    functions: HashMap<(i64, i64), u64>,
}

impl Locations {
    /// The id of the location of `p.pcs[i]`, written into `out` the
    /// first time, with its functions.
    fn id(
        &mut self,
        i: usize,
        p: &PcProfile,
        out: &mut proto::Profile,
        strings: &mut Strings,
    ) -> u64 {
        if let Some(&id) = self.of_pc.get(&i) {
            return id;
        }
        let pc = &p.pcs[i];
        let id = out.location.len() as u64 + 1;
        let mut line = Vec::new();
        for f in frames(&pc.location) {
            let name = match f.function {
                Some(name) => strings.put(name),
                None => strings.put(&format!("{:#x}", pc.pc)),
            };
            let file = strings.put(f.file.unwrap_or(""));
            let next = self.functions.len() as u64 + 1;
            let function_id = *self.functions.entry((name, file)).or_insert_with(|| {
                out.function.push(proto::Function {
                    id: next,
                    name,
                    system_name: name,
                    filename: file,
                    start_line: 0,
                });
                next
            });
            line.push(proto::Line {
                function_id,
                line: f.line.map_or(0, i64::from),
            });
        }
        out.location.push(proto::Location {
            id,
            mapping_id: pc.object.map_or(0, |o| o as u64 + 1),
            address: pc.pc,
            line,
        });
        self.of_pc.insert(i, id);
        id
    }
}

/// One mapping per object, numbered from 1 in [`PcProfile::objects`]'
/// order. An object that spans the whole address space is narrowed to
/// its PCs: pprof takes a mapping's range as the addresses it covers.
fn mappings(p: &PcProfile, strings: &mut Strings) -> Vec<proto::Mapping> {
    let pcs_of = |o: usize| p.pcs.iter().filter(move |pc| pc.object == Some(o));
    p.objects
        .iter()
        .enumerate()
        .map(|(o, obj)| {
            let (start, end) = if obj.start == 0 && obj.end == u64::MAX {
                let lo = pcs_of(o).map(|pc| pc.pc).min().unwrap_or(0);
                let hi = pcs_of(o).map(|pc| pc.pc + 1).max().unwrap_or(0);
                (lo, hi)
            } else {
                (obj.start, obj.end)
            };
            proto::Mapping {
                id: o as u64 + 1,
                memory_start: start,
                memory_limit: end,
                file_offset: 0,
                filename: strings.put(&obj.path),
                build_id: obj.build_id.as_deref().map_or(0, |id| strings.put(id)),
                has_functions: true,
                has_filenames: true,
                has_line_numbers: true,
                has_inline_frames: true,
            }
        })
        .collect()
}

/// Writes `p` to `out` as a gzipped pprof profile, with `comments`.
///
/// The samples are encoded and compressed as they are made, never held
/// as messages: a call-heavy program has a sample per (calling context,
/// PC), hundreds of thousands for SQLite. The rest of the message
/// follows them. A protobuf message's fields may come in any order, and
/// a repeated field's elements wherever they are, so the file decodes to
/// [`profile`]'s message.
pub fn write(out: &mut impl Write, p: &PcProfile, comments: &[String]) -> io::Result<()> {
    /// Encoded samples gathered before they go to the compressor.
    const BATCH: usize = 1 << 16;
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    let mut bytes = Vec::with_capacity(BATCH + 4096);
    let mut failed = Ok(());
    let rest = build(p, comments, |s| {
        prost::encoding::message::encode(SAMPLE_FIELD, s, &mut bytes);
        if bytes.len() >= BATCH && failed.is_ok() {
            failed = gz.write_all(&bytes);
            bytes.clear();
        }
    });
    failed?;
    gz.write_all(&bytes)?;
    gz.write_all(&rest.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}

/// The field number of `Profile.sample` in profile.proto.
const SAMPLE_FIELD: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::inlined;
    use crate::{Cost, Object};
    use coprof_symbols::Location;
    use std::io::Read;

    fn sample_profile() -> PcProfile {
        let mut p = PcProfile::new(vec![Cost::instructions(), Cost::samples()], vec![]);
        p.objects.push(Object {
            path: "/bin/prog".into(),
            start: 0,
            end: u64::MAX,
            build_id: None,
        });
        p.push(0x1008, vec![9, 2], Some(0), inlined(0x1008, 5));
        p.push(0x1000, vec![0, 0], Some(0), Location::address(0x1000));
        p.push(0x2010, vec![4, 1], Some(0), Location::address(0x2010));
        p
    }

    #[test]
    fn a_gzipped_profile_decodes_to_the_message() {
        // Flat, with calls, and with more samples than one batch of
        // encoded samples holds, which are written as they are made.
        let mut many = PcProfile::new(vec![Cost::instructions()], vec![]);
        for i in 0..30_000u64 {
            many.push(0x1000 + 4 * i, vec![i % 7], None, Location::address(0));
        }
        for p in [sample_profile(), crate::fixtures::recursive(), many] {
            let mut gz = Vec::new();
            write(&mut gz, &p, &["a note".into()]).unwrap();
            let mut raw = Vec::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_end(&mut raw)
                .unwrap();
            let back = proto::Profile::decode(&raw[..]).unwrap();
            let want = profile(&p, &["a note".into()]);
            assert!(!want.sample.is_empty());
            assert_eq!(back, want);
        }
    }

    #[test]
    fn a_threads_samples_carry_its_number_as_a_label() {
        let mut p = crate::fixtures::recursive();
        for (i, c) in p.context_costs.iter_mut().enumerate() {
            c.thread = (i % 2 == 1).then_some(7);
        }
        p.thread_names.insert(7, "worker".into());
        let m = profile(&p, &[]);
        let text = |i: i64| m.string_table[i as usize].as_str();
        let labels: Vec<Vec<(&str, &str, i64)>> = m
            .sample
            .iter()
            .map(|s| {
                s.label
                    .iter()
                    .map(|l| (text(l.key), text(l.str), l.num))
                    .collect()
            })
            .collect();
        let want: Vec<Vec<(&str, &str, i64)>> = (0..p.context_costs.len())
            .map(|i| match i % 2 {
                1 => vec![("thread", "", 7), ("thread_name", "worker", 0)],
                _ => vec![],
            })
            .collect();
        assert_eq!(labels, want);
        // Without threads, no label and no key among the strings.
        let plain = profile(&crate::fixtures::recursive(), &[]);
        assert!(plain.sample.iter().all(|s| s.label.is_empty()));
        assert!(!plain.string_table.contains(&"thread".to_string()));
    }

    #[test]
    fn a_mapping_carries_its_objects_build_id() {
        let mut p = sample_profile();
        p.objects.push(Object {
            path: "/lib/libc.so.6".into(),
            start: 0x4000,
            end: 0x8000,
            build_id: Some("0123abcd".into()),
        });
        p.push(0x4010, vec![1, 1], Some(1), Location::address(0x4010));
        let m = profile(&p, &[]);
        let ids: Vec<&str> = m
            .mapping
            .iter()
            .map(|x| m.string_table[x.build_id as usize].as_str())
            .collect();
        assert_eq!(ids, ["", "0123abcd"]);
    }

    #[test]
    fn locations_carry_inlined_lines_innermost_first_and_one_sample_each() {
        let m = profile(&sample_profile(), &[]);
        let s = |i: i64| m.string_table[i as usize].as_str();
        assert_eq!(s(0), "");
        let types: Vec<(&str, &str)> = m
            .sample_type
            .iter()
            .map(|t| (s(t.r#type), s(t.unit)))
            .collect();
        assert_eq!(types, [("instructions", "count"), ("samples", "count")]);
        // pprof shows the last by default, as a CPU profile's time.
        assert_eq!(s(m.default_sample_type), "samples");
        // The PC with no cost is left out.
        assert_eq!(m.location.len(), 2);
        assert_eq!(m.sample.len(), 2);
        let loc = &m.location[0];
        assert_eq!((loc.id, loc.address, loc.mapping_id), (1, 0x1008, 1));
        let lines: Vec<(&str, &str, i64)> = loc
            .line
            .iter()
            .map(|l| {
                let f = &m.function[l.function_id as usize - 1];
                (s(f.name), s(f.filename), l.line)
            })
            .collect();
        assert_eq!(
            lines,
            [("helper", "/src/util.h", 5), ("main", "/src/prog.c", 20)]
        );
        assert!(m.location[1].line.is_empty(), "a bare address has no line");
        assert_eq!(m.sample[0].location_id, [1]);
        assert_eq!(m.sample[0].value, [9, 2]);
        // The whole-space mapping is narrowed to the PCs.
        let map = &m.mapping[0];
        assert_eq!((map.memory_start, map.memory_limit), (0x1000, 0x2011));
        assert_eq!(s(map.filename), "/bin/prog");
    }

    #[test]
    fn each_context_is_a_sample_whose_stack_is_its_pc_then_the_call_sites_open() {
        let m = profile(&crate::fixtures::recursive(), &[]);
        let address = |id: u64| m.location[id as usize - 1].address;
        let samples: Vec<(Vec<u64>, i64)> = m
            .sample
            .iter()
            .map(|s| {
                (
                    s.location_id.iter().map(|&id| address(id)).collect(),
                    s.value[0],
                )
            })
            .collect();
        assert_eq!(
            samples,
            [
                (vec![0x1000], 2),
                (vec![0x1004], 1),
                (vec![0x2000, 0x1004], 1),
                (vec![0x2004, 0x1004], 1),
                (vec![0x2008, 0x1004], 1),
                (vec![0x2000, 0x2004, 0x1004], 1),
                (vec![0x2008, 0x2004, 0x1004], 1),
            ]
        );
        assert_eq!(
            m.location.len(),
            5,
            "one location per PC, shared by the stacks"
        );
    }

    proptest::proptest! {
        /// Whatever the PCs and their inlining, the message decoded has a
        /// sample per PC with a cost, its one location at the PC with the
        /// PC's frames as lines, innermost first, and the same totals.
        #[test]
        fn every_pc_is_a_location_with_its_frames(
            pcs in proptest::collection::btree_map(
                0u64..4096,
                (0usize..3, 1u32..50, 0usize..3, 0u64..5),
                1..60,
            )
        ) {
            let names = ["main", "hot", "helper"];
            let mut p = PcProfile::new(vec![Cost::instructions()], vec![]);
            for (&pc, &(function, line, depth, n)) in &pcs {
                let mut l = crate::fixtures::at(pc, names[function], "/src/a.c", line);
                for d in 0..depth {
                    l.inlined.push(coprof_symbols::Frame {
                        function: Some(names[(function + d + 1) % 3].into()),
                        file: Some("/src/b.c".into()),
                        line: Some(line + d as u32 + 1),
                        column: None,
                    });
                }
                p.push(pc, vec![n], None, l);
            }
            let mut gz = Vec::new();
            write(&mut gz, &p, &[]).unwrap();
            let mut raw = Vec::new();
            flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
            let m = proto::Profile::decode(&raw[..]).unwrap();
            let s = |i: i64| m.string_table[i as usize].clone();
            let costly: Vec<&crate::PcCost> = p.pcs.iter().filter(|pc| pc.values[0] > 0).collect();
            proptest::prop_assert_eq!(m.sample.len(), costly.len());
            let mut total = 0;
            for (sample, pc) in m.sample.iter().zip(&costly) {
                proptest::prop_assert_eq!(sample.location_id.len(), 1);
                let loc = &m.location[sample.location_id[0] as usize - 1];
                proptest::prop_assert_eq!(loc.address, pc.pc);
                let lines: Vec<(String, String, i64)> = loc
                    .line
                    .iter()
                    .map(|l| {
                        let f = &m.function[l.function_id as usize - 1];
                        (s(f.name), s(f.filename), l.line)
                    })
                    .collect();
                let want: Vec<(String, String, i64)> = frames(&pc.location)
                    .iter()
                    .map(|f| {
                        (
                            f.function.unwrap().to_string(),
                            f.file.unwrap().to_string(),
                            i64::from(f.line.unwrap()),
                        )
                    })
                    .collect();
                proptest::prop_assert_eq!(lines, want);
                proptest::prop_assert_eq!(sample.value.clone(), vec![pc.values[0] as i64]);
                total += pc.values[0];
            }
            proptest::prop_assert_eq!(total, p.totals()[0]);
        }
    }
}

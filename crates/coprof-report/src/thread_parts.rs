//! A profile whose threads were kept apart, cut into one profile per
//! thread: what callgrind's `--separate-threads=yes` writes as a file per
//! thread (valgrind manual, "Callgrind", §6.3.1 and its option), since a
//! callgrind file has one part per reader (`callgrind_annotate` reads one)
//! and no place for a thread on its cost lines.

use crate::pc_profile::{add, PcProfile};
use std::collections::HashMap;

impl PcProfile {
    /// The threads whose costs the profile keeps apart, by id; empty for
    /// a profile of all threads together.
    pub fn threads(&self) -> Vec<u64> {
        let mut threads: Vec<u64> = (self.context_costs.iter().map(|c| c.thread))
            .chain(self.calls.iter().map(|c| c.thread))
            .flatten()
            .collect();
        threads.sort_unstable();
        threads.dedup();
        threads
    }

    /// Thread `tid`'s part of the profile: its calls and its costs, each
    /// PC's summed over its contexts in this thread alone, with
    /// [`thread`](Self::thread) set. Every PC stays at its index, with
    /// zero costs where the thread ran nothing, so that the parts of a
    /// profile name their code alike.
    pub fn of_thread(&self, tid: u64) -> PcProfile {
        let mut part = PcProfile {
            costs: self.costs.clone(),
            objects: self.objects.clone(),
            pcs: self.pcs.clone(),
            command: self.command.clone(),
            pid: self.pid,
            thread: Some(tid),
            thread_names: self.thread_names.clone(),
            ..PcProfile::default()
        };
        for pc in &mut part.pcs {
            pc.values.fill(0);
        }
        // Each of the thread's calls at its index in the part.
        let mut index: HashMap<usize, usize> = HashMap::new();
        for (i, call) in self.calls.iter().enumerate() {
            if call.thread != Some(tid) {
                continue;
            }
            let mut call = *call;
            call.parent = call.parent.map(|p| index[&p]);
            index.insert(i, part.push_call(call));
        }
        for cost in self.context_costs.iter().filter(|c| c.thread == Some(tid)) {
            let mut cost = cost.clone();
            cost.context = cost.context.map(|c| index[&c]);
            add(&mut part.pcs[cost.pc].values, &cost.values);
            part.push_context_cost(cost);
        }
        part
    }
}

#[cfg(test)]
mod tests {
    use crate::fixtures::recursive;
    use crate::PcProfile;

    /// The recursive fixture run by two threads: thread 7 as the fixture
    /// runs, thread 9 its first call alone, without the recursive one.
    fn two_threads() -> PcProfile {
        let one = recursive();
        let mut p = one.clone();
        for c in &mut p.calls {
            c.thread = Some(7);
        }
        for c in &mut p.context_costs {
            c.thread = Some(7);
        }
        let outer = p.push_call(crate::CallContext {
            thread: Some(9),
            ..one.calls[0]
        });
        for c in one.context_costs.iter().filter(|c| c.context != Some(1)) {
            let mut c = c.clone();
            c.thread = Some(9);
            c.context = c.context.map(|_| outer);
            crate::pc_profile::add(&mut p.pcs[c.pc].values, &c.values);
            p.push_context_cost(c);
        }
        p
    }

    #[test]
    fn each_threads_part_has_its_own_calls_and_costs_and_the_parts_add_up_to_the_whole() {
        let p = two_threads();
        assert_eq!(p.threads(), vec![7, 9]);
        let (seven, nine) = (p.of_thread(7), p.of_thread(9));
        assert_eq!((seven.thread, nine.thread), (Some(7), Some(9)));
        // Thread 7 is the fixture alone, but for its thread.
        let one = recursive();
        assert_eq!(seven.totals(), one.totals());
        assert_eq!(seven.inclusive(), one.inclusive());
        assert_eq!(seven.calls.len(), 2);
        // Thread 9 made one call, with no recursive call under it.
        assert_eq!(nine.calls.len(), 1);
        assert_eq!(nine.calls[0].parent, None);
        assert_eq!(nine.totals(), vec![6]);
        assert_eq!(nine.inclusive(), vec![vec![3]]);
        // The parts' PCs add up to the whole's, PC by PC.
        for (i, pc) in p.pcs.iter().enumerate() {
            assert_eq!(
                seven.pcs[i].values[0] + nine.pcs[i].values[0],
                pc.values[0],
                "{:#x}",
                pc.pc
            );
        }
        assert!(
            one.threads().is_empty(),
            "a profile of all threads together"
        );
    }

    #[test]
    fn a_thread_the_profile_does_not_have_is_an_empty_part() {
        let part = two_threads().of_thread(8);
        assert_eq!(part.totals(), vec![0]);
        assert!(part.calls.is_empty() && part.context_costs.is_empty());
    }
}

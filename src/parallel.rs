//! Splitting bulk per-tool work (checking schemas, analysing text) over the machine's cores.
//!
//! `registerMany` of a whole catalog runs on the caller's thread and must return fast; most of
//! its work is independent per tool, so it is done in contiguous chunks on scoped threads and
//! the results are merged in order on the calling thread. No pool is kept: a bulk build is rare
//! and a thread start (tens of microseconds) is noise next to it.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

/// More threads than this rarely pay for their start and merge costs at catalog sizes.
const MAX_THREADS: usize = 4;

/// Maps `f` over `items` split into contiguous chunks, one per available core (capped), and
/// returns the chunk results in order. Fewer than `min_chunk` items per thread run on the
/// calling thread alone. The first chunk always runs on the calling thread.
pub(crate) fn map_chunks<T, R, F>(mut items: Vec<T>, min_chunk: usize, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(Vec<T>) -> R + Sync,
{
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let threads = cores
        .min(MAX_THREADS)
        .min(items.len() / min_chunk.max(1))
        .max(1);
    if threads == 1 {
        return vec![f(items)];
    }
    let per = items.len().div_ceil(threads);
    let mut chunks = Vec::with_capacity(threads);
    while items.len() > per {
        let tail = items.split_off(items.len() - per);
        chunks.push(tail);
    }
    chunks.push(items);
    chunks.reverse();
    std::thread::scope(|scope| {
        let mut chunks = chunks.into_iter();
        let first = chunks.next().unwrap_or_default();
        let f = &f;
        // A thread that cannot be started (a process at its thread limit) leaves its chunk to
        // the calling thread: slower, never a failure.
        let rest: Vec<_> = chunks
            .map(|chunk| {
                let shared = Arc::new(Mutex::new(Some(chunk)));
                let given = shared.clone();
                let started = std::thread::Builder::new()
                    .name("toolreg-bulk".into())
                    .spawn_scoped(scope, move || f(take(&given)));
                match started {
                    Ok(handle) => Part::Running(handle),
                    Err(_) => Part::Here(take(&shared)),
                }
            })
            .collect();
        let mut out = Vec::with_capacity(threads);
        out.push(f(first));
        for part in rest {
            out.push(match part {
                // A panicking worker is a bug; re-raise it here as if it had run on this thread.
                Part::Running(handle) => handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Part::Here(chunk) => f(chunk),
            });
        }
        out
    })
}

/// A chunk after the attempt to start its thread.
enum Part<'scope, T, R> {
    Running(std::thread::ScopedJoinHandle<'scope, R>),
    Here(Vec<T>),
}

/// The chunk a worker was given (exactly once: by the worker, or back by the caller).
fn take<T>(slot: &Mutex<Option<Vec<T>>>) -> Vec<T> {
    slot.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_back_in_order_and_cover_everything() {
        for n in [0, 1, 7, 100, 1001] {
            let items: Vec<usize> = (0..n).collect();
            let parts = map_chunks(items, 10, |c| c);
            assert!(parts.len() <= MAX_THREADS);
            let flat: Vec<usize> = parts.into_iter().flatten().collect();
            assert_eq!(flat, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn small_inputs_stay_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let parts = map_chunks(vec![1, 2, 3], 10, |c| {
            (std::thread::current().id(), c.len())
        });
        assert_eq!(parts, vec![(caller, 3)]);
    }
}

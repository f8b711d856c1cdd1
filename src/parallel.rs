//! Splitting bulk per-tool work (checking schemas, analysing text) over the machine's cores.
//!
//! `registerMany` of a whole catalog runs on the caller's thread and must return fast; most of
//! its work is independent per tool, so it is done in contiguous chunks on scoped threads and
//! the results are merged in order on the calling thread. No pool is kept: a bulk build is rare
//! and a thread start (tens of microseconds) is noise next to it.

use std::num::NonZeroUsize;

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
        let rest: Vec<_> = chunks.map(|c| scope.spawn(move || f(c))).collect();
        let mut out = Vec::with_capacity(threads);
        out.push(f(first));
        // A panicking worker is a bug; re-raise it here as if it had run on this thread.
        out.extend(
            rest.into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        out
    })
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

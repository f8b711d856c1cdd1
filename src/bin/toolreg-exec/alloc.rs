//! The memory cap. Every heap allocation of this process — the engine's (QuickJS allocates
//! through Rust's allocator here) and the run's buffers alike — goes through [`Counting`].
//! While a run is armed, an allocation that would pass its cap ends the process at once with
//! [`EXIT_MEMORY`]: there is no failed allocation for the code to catch and carry on after.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::protocol::EXIT_MEMORY;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

pub struct Counting;

/// Counts `bytes` more, unless that would pass the cap.
fn reserve(bytes: usize) {
    let before = IN_USE.fetch_add(bytes, Ordering::Relaxed);
    if before.saturating_add(bytes) > CAP.load(Ordering::Relaxed) {
        over_cap();
    }
}

fn release(bytes: usize) {
    IN_USE.fetch_sub(bytes, Ordering::Relaxed);
}

/// Ends the process; only async-signal-safe calls, and nothing that allocates.
#[cold]
fn over_cap() -> ! {
    CAP.store(usize::MAX, Ordering::Relaxed);
    crate::guard::exit_now(EXIT_MEMORY, b"toolreg-exec: memory limit reached\n")
}

// SAFETY: every method forwards to `System` with the same layout; the counting around it never
// touches the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            release(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            release(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        release(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old_size = layout.size();
        if new_size > old_size {
            reserve(new_size - old_size);
        }
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        match (new.is_null(), new_size > old_size) {
            (true, true) => release(new_size - old_size),
            (false, false) => release(old_size - new_size),
            _ => {}
        }
        new
    }
}

/// Caps what the process may hold from now on at what it holds now plus `limit` bytes.
pub fn arm(limit: u64) {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    CAP.store(
        IN_USE.load(Ordering::Relaxed).saturating_add(limit),
        Ordering::Relaxed,
    );
}

pub fn disarm() {
    CAP.store(usize::MAX, Ordering::Relaxed);
}

//! The engine thread: one wasmtime instance of the guest (QuickJS, crates/exec-guest) per run.
//!
//! Each run gets an instance prepared ahead by a second thread (a copy of a snapshot taken after
//! QuickJS's set-up), so neither the instance nor the engine's set-up is part of the run. The
//! engine never frees its heap: after the run the instance is handed to that thread and dropped
//! whole (its linear memory unmapped, ~50 µs), concurrently with whatever runs next, which
//! therefore never waits on it. The process says `READY` only when a prepared instance is there.
//!
//! What holds here whatever the guest does: it reaches nothing but its linear memory and the
//! functions below; its memory cannot grow past the run's cap (growing traps, it does not
//! fail, so the code cannot catch it); overflowing its stack region traps; a stop traps it at
//! the next loop head or call, or wakes it from `wait`. Frames it sends are checked against
//! the run's caps here, before the addon checks them again.

use std::hash::{BuildHasher, RandomState};
use std::io::{BufWriter, Stdout};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::{SystemTime, UNIX_EPOCH};

use wasmtime::{
    Caller, Engine, Error, Extern, Instance, InstancePre, Linker, Memory, Module, ResourceLimiter,
    Store, Trap,
};

use crate::Inbound;
use crate::engine_config::{self, STACK_REGION_BYTES};
use crate::protocol::{
    self, CALL, DONE, FrameCaps, IDLE, LOG, OVER, PROTOCOL_VERSION, READY, RunEnd, RunRequest,
};

static GUEST: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/guest.cwasm"));

/// A stack pointer this close to the bottom of the region, when memory access traps, means
/// the stack ran out (a frame larger than what was left reaches below address 0 and wraps).
const STACK_LOW_WATER: u32 = 64 * 1024;

/// The process's two ends of the pipe to the addon.
pub struct Link {
    out: BufWriter<Stdout>,
    inbox: Receiver<Inbound>,
}

impl Link {
    fn write(&mut self, kind: u8, parts: &[&[u8]]) {
        if protocol::write_frame(&mut self.out, kind, parts).is_err() {
            // The addon is gone; nobody is left to serve.
            std::process::exit(0);
        }
    }
}

/// What a run's store holds: the link (while it runs), and what the run did that decides how
/// it ended.
struct RunIo {
    link: Option<Link>,
    caps: FrameCaps,
    /// Largest linear memory the run may have, in bytes.
    memory_cap: usize,
    memory_refused: bool,
    answers_taken: u32,
    answer: Option<Vec<u8>>,
    done_sent: bool,
    /// A frame over its cap was refused (the addon was told with `OVER`).
    over: bool,
    /// The addon said stop while the guest waited.
    stopped: bool,
}

impl RunIo {
    fn link(&mut self) -> &mut Link {
        self.link.as_mut().expect("a running store holds the link")
    }
}

impl ResourceLimiter for RunIo {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_cap {
            self.memory_refused = true;
            // An error, not `false`: a failed growth would be an allocation failure QuickJS
            // turns into an exception the code can catch.
            return Err(Error::msg("the run's memory limit"));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // The guest's one table holds its functions and never grows.
        Ok(desired <= 1 << 16)
    }
}

/// The compiled guest, ready to instantiate.
pub struct Runner {
    engine: Engine,
    pre: InstancePre<RunIo>,
    /// A prepared instance's memory, taken once: restoring it into a fresh instance prepares
    /// it in a fraction of the time that creating QuickJS's runtime and context takes there.
    snapshot: OnceLock<Snapshot>,
    seeds: RandomState,
    runs: AtomicU64,
}

/// What preparing changed in an instance: its memory above the stack region (static data whole,
/// then the heap's chunks that are not zero) and its size. The stack region is left as a fresh
/// instance has it: nothing lives there between calls.
struct Snapshot {
    bytes: usize,
    chunks: Vec<(usize, Vec<u8>)>,
}

/// The unit in which the heap is compared with zero.
const SNAPSHOT_CHUNK: usize = 4096;

impl Snapshot {
    fn take(instance: &Instance, store: &mut Store<RunIo>) -> wasmtime::Result<Snapshot> {
        let data_end = instance
            .get_global(&mut *store, "__data_end")
            .and_then(|g| g.get(&mut *store).i32())
            .ok_or_else(|| Error::msg("the engine exports no __data_end"))?
            as u32 as usize;
        let memory = memory_of(instance, store)?;
        let data = memory.data(&*store);
        let mut chunks: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut offset = STACK_REGION_BYTES as usize;
        while offset < data.len() {
            let end = (offset + SNAPSHOT_CHUNK).min(data.len());
            let chunk = &data[offset..end];
            if offset < data_end || chunk.iter().any(|&b| b != 0) {
                match chunks.last_mut() {
                    Some((start, bytes)) if *start + bytes.len() == offset => {
                        bytes.extend_from_slice(chunk)
                    }
                    _ => chunks.push((offset, chunk.to_vec())),
                }
            }
            offset = end;
        }
        Ok(Snapshot {
            bytes: data.len(),
            chunks,
        })
    }

    fn restore(&self, instance: &Instance, store: &mut Store<RunIo>) -> wasmtime::Result<()> {
        let memory = memory_of(instance, store)?;
        let missing = self.bytes.saturating_sub(memory.data_size(&*store));
        memory.grow(&mut *store, missing.div_ceil(WASM_PAGE) as u64)?;
        for (offset, bytes) in &self.chunks {
            memory.write(&mut *store, *offset, bytes)?;
        }
        Ok(())
    }
}

const WASM_PAGE: usize = 64 * 1024;

/// An instance built and prepared for the next run.
struct Prepared {
    store: Store<RunIo>,
    instance: Result<Instance, String>,
    /// The linear memory's size after preparing: the stack region, static data and the fresh
    /// engine. The run's `memoryLimitBytes` is on top of this.
    base: usize,
}

impl Runner {
    pub fn load() -> Result<Runner, String> {
        let engine = Engine::new(&engine_config::config())
            .map_err(|e| format!("cannot set up the WebAssembly engine: {e}"))?;
        // SAFETY: the bytes were made by build.rs, with this wasmtime and these settings, and
        // are part of this executable.
        let module = unsafe { Module::deserialize(&engine, GUEST) }
            .map_err(|e| format!("cannot load the compiled engine: {e}"))?;
        let mut linker = Linker::new(&engine);
        let linked = (|| {
            linker.func_wrap("toolreg", "send", send)?;
            linker.func_wrap("toolreg", "wait", wait)?;
            linker.func_wrap("toolreg", "take", take)?;
            linker.func_wrap("toolreg", "out_of_memory", out_of_memory)?;
            linker.func_wrap("env", "__rquickjs_host_now_us", now_us)?;
            linker.instantiate_pre(&module)
        })();
        let pre = linked.map_err(|e| format!("cannot link the compiled engine: {e}"))?;
        Ok(Runner {
            engine,
            pre,
            snapshot: OnceLock::new(),
            seeds: RandomState::new(),
            runs: AtomicU64::new(0),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// 128 bits for the run's `Math.random`: a counter hashed with the process's random keys.
    fn next_seed(&self) -> [u64; 2] {
        let run = self.runs.fetch_add(2, Ordering::Relaxed);
        [self.seeds.hash_one(run), self.seeds.hash_one(run + 1)]
    }

    fn prepare(&self) -> Prepared {
        let mut store = Store::new(
            &self.engine,
            RunIo {
                link: None,
                caps: FrameCaps::default(),
                memory_cap: usize::MAX,
                memory_refused: false,
                answers_taken: 0,
                answer: None,
                done_sent: false,
                over: false,
                stopped: false,
            },
        );
        store.limiter(|io| io);
        store.epoch_deadline_trap();
        // Preparing is not part of a run: a stop meant for the last run must not end it.
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = (|| {
            let instance = self.pre.instantiate(&mut store)?;
            match self.snapshot.get() {
                Some(snapshot) => snapshot.restore(&instance, &mut store)?,
                None => {
                    let failed = instance
                        .get_typed_func::<(), u32>(&mut store, "toolreg_prepare")?
                        .call(&mut store, ())?;
                    if failed != 0 {
                        return Err(Error::msg("QuickJS could not start"));
                    }
                    let _ = self.snapshot.set(Snapshot::take(&instance, &mut store)?);
                }
            }
            wasmtime::Result::Ok(instance)
        })()
        .map_err(|e| format!("the engine could not be prepared: {}", trap_words(&e)));
        let base = match &instance {
            Ok(instance) => memory_of(instance, &mut store).map_or(0, |m| m.data_size(&store)),
            Err(_) => 0,
        };
        Prepared {
            store,
            instance,
            base,
        }
    }

    /// Runs one request on a prepared instance and sends its `DONE` (unless the guest did).
    /// Returns the link and the used store (to be dropped off this thread).
    fn run(
        &self,
        prepared: Prepared,
        link: Link,
        request_json: &[u8],
        stop: &AtomicBool,
    ) -> (Link, Store<RunIo>) {
        let Prepared {
            mut store,
            instance,
            base,
        } = prepared;
        store.data_mut().link = Some(link);
        let end = match (serde_json::from_slice::<RunRequest>(request_json), instance) {
            (Err(e), _) => Some(RunEnd::Engine {
                message: format!("bad run request: {e}"),
            }),
            (_, Err(message)) => Some(RunEnd::Engine { message }),
            (Ok(request), Ok(instance)) => {
                let io = store.data_mut();
                io.caps = request.frame_caps();
                io.memory_cap = usize::try_from(request.memory_limit_bytes)
                    .map_or(usize::MAX, |limit| base.saturating_add(limit));
                let top = request.max_stack_size_bytes.min(STACK_REGION_BYTES) as u32 & !15;
                store.set_epoch_deadline(1);
                if stop.load(Ordering::SeqCst) {
                    Some(RunEnd::Stopped)
                } else {
                    let result =
                        call_run(&instance, &mut store, request_json, top, self.next_seed());
                    match result {
                        Ok(()) if store.data().done_sent => None,
                        Ok(()) => Some(RunEnd::Engine {
                            message: "the engine ended without an outcome".to_owned(),
                        }),
                        Err(_) if store.data().done_sent => None,
                        Err(error) => Some(classify(&error, &instance, &mut store, top, stop)),
                    }
                }
            }
        };
        let io = store.data_mut();
        if let Some(end) = end {
            io.link().write(DONE, &[&protocol::encode_done(&end)]);
        }
        let link = io.link.take().expect("the link was put in above");
        (link, store)
    }
}

/// Sets the run's stack, copies the request in and runs it.
fn call_run(
    instance: &Instance,
    store: &mut Store<RunIo>,
    request_json: &[u8],
    stack_top: u32,
    seed: [u64; 2],
) -> wasmtime::Result<()> {
    let stack_pointer = instance
        .get_global(&mut *store, "__stack_pointer")
        .ok_or_else(|| Error::msg("the engine exports no stack pointer"))?;
    stack_pointer.set(&mut *store, wasmtime::Val::I32(stack_top as i32))?;
    let [a, b] = seed;
    instance
        .get_typed_func::<(u32, u32, u32, u32), ()>(&mut *store, "toolreg_seed")?
        .call(
            &mut *store,
            (a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32),
        )?;
    let len = u32::try_from(request_json.len()).map_err(|_| Error::msg("a run over 4 GiB"))?;
    let ptr = instance
        .get_typed_func::<u32, u32>(&mut *store, "toolreg_alloc")?
        .call(&mut *store, len)?;
    let memory = memory_of(instance, &mut *store)?;
    memory.write(&mut *store, ptr as usize, request_json)?;
    instance
        .get_typed_func::<(u32, u32), ()>(&mut *store, "toolreg_run")?
        .call(&mut *store, (ptr, len))
}

/// How a run that trapped ended: a stop, a limit, or an engine failure.
fn classify(
    error: &Error,
    instance: &Instance,
    store: &mut Store<RunIo>,
    stack_top: u32,
    stop: &AtomicBool,
) -> RunEnd {
    let io = store.data();
    if io.over || io.stopped || stop.load(Ordering::SeqCst) {
        return RunEnd::Stopped;
    }
    if io.memory_refused {
        return RunEnd::MemoryLimit;
    }
    let stack_pointer = instance
        .get_global(&mut *store, "__stack_pointer")
        .and_then(|g| g.get(&mut *store).i32())
        .map(|sp| sp as u32);
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => RunEnd::Stopped,
        Some(Trap::StackOverflow) => RunEnd::StackLimit,
        Some(Trap::MemoryOutOfBounds)
            if stack_pointer.is_some_and(|sp| sp > stack_top || sp < STACK_LOW_WATER) =>
        {
            RunEnd::StackLimit
        }
        _ => RunEnd::Engine {
            message: format!("the engine failed: {}", trap_words(error)),
        },
    }
}

/// A trap or error in a sentence, without the guest's backtrace.
fn trap_words(error: &Error) -> String {
    match error.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => error.to_string(),
    }
}

fn memory_of(instance: &Instance, store: &mut Store<RunIo>) -> wasmtime::Result<Memory> {
    instance
        .get_memory(store, "memory")
        .ok_or_else(|| Error::msg("the engine exports no memory"))
}

fn caller_memory(caller: &mut Caller<'_, RunIo>) -> wasmtime::Result<Memory> {
    caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| Error::msg("the engine exports no memory"))
}

/// `toolreg.send(kind, ptr, len)`: a frame from the guest, checked, then passed on.
fn send(mut caller: Caller<'_, RunIo>, kind: u32, ptr: u32, len: u32) -> wasmtime::Result<()> {
    let kind = u8::try_from(kind)
        .ok()
        .filter(|k| matches!(*k, CALL | LOG | DONE))
        .ok_or_else(|| Error::msg("the engine sent a frame of an unknown kind"))?;
    let memory = caller_memory(&mut caller)?;
    let (data, io) = memory.data_and_store_mut(&mut caller);
    if u64::from(len) > io.caps.of(kind) {
        io.over = true;
        io.link()
            .write(OVER, &[&[kind], &u64::from(len).to_le_bytes()]);
        return Err(Error::msg("a frame over the run's limit"));
    }
    let start = ptr as usize;
    let bytes = data
        .get(start..start + len as usize)
        .ok_or_else(|| Error::msg("the engine sent a frame outside its memory"))?;
    if kind == DONE {
        // Stops and limits are this process's to report, never the guest's.
        match protocol::decode_done(bytes) {
            Ok(RunEnd::Stopped | RunEnd::MemoryLimit | RunEnd::StackLimit) | Err(_) => {
                return Err(Error::msg("the engine sent an outcome it cannot give"));
            }
            Ok(_) => io.done_sent = true,
        }
    }
    io.link().write(kind, &[bytes]);
    Ok(())
}

/// `toolreg.wait()`: the next answer's length, once one is there. The addon is told the run
/// is idle (with how many answers it has taken) only when nothing is waiting already.
fn wait(mut caller: Caller<'_, RunIo>) -> wasmtime::Result<u32> {
    let io = caller.data_mut();
    let inbound = match io.link().inbox.try_recv() {
        Ok(inbound) => inbound,
        Err(TryRecvError::Empty) => {
            let taken = io.answers_taken;
            io.link().write(IDLE, &[&taken.to_le_bytes()]);
            io.link()
                .inbox
                .recv()
                .unwrap_or_else(|_| std::process::exit(0))
        }
        Err(TryRecvError::Disconnected) => std::process::exit(0),
    };
    match inbound {
        Inbound::Answer(payload) => {
            io.answers_taken += 1;
            let len =
                u32::try_from(payload.len()).map_err(|_| Error::msg("an answer over 4 GiB"))?;
            io.answer = Some(payload);
            Ok(len)
        }
        Inbound::Stop => {
            io.stopped = true;
            Err(Error::msg("stopped"))
        }
        Inbound::Run(_) => Err(Error::msg("a run arrived before this one ended")),
    }
}

/// `toolreg.take(ptr)`: copies the answer `wait` announced into the guest's memory.
fn take(mut caller: Caller<'_, RunIo>, ptr: u32) -> wasmtime::Result<()> {
    let answer = caller
        .data_mut()
        .answer
        .take()
        .ok_or_else(|| Error::msg("the engine took an answer it did not wait for"))?;
    let memory = caller_memory(&mut caller)?;
    memory.write(&mut caller, ptr as usize, &answer)?;
    Ok(())
}

/// `toolreg.out_of_memory()`: the engine could not allocate. The run ends at its memory limit
/// (a trap, like a refused growth), never with an exception the code could catch.
fn out_of_memory(mut caller: Caller<'_, RunIo>) -> wasmtime::Result<()> {
    caller.data_mut().memory_refused = true;
    Err(Error::msg("the run's memory limit"))
}

/// `env.__rquickjs_host_now_us()`: the time for `Date` (QuickJS's one import of its own).
fn now_us() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_micros() as f64)
}

/// The engine thread's native stack, where compiled guest code runs. A run that recursed deep
/// (up to `NATIVE_STACK_BYTES`) leaves those pages resident for the process's life; after each
/// run they are handed back, so a pooled process idles at about the size of a fresh one.
struct EngineStack {
    /// About the stack's top: an address in the thread's first frame.
    top: usize,
}

impl EngineStack {
    /// Called first thing on the engine thread, whose stack main.rs sizes.
    fn here() -> Self {
        let marker = 0u8;
        EngineStack {
            top: std::ptr::addr_of!(marker) as usize,
        }
    }

    fn release_unused(&self) {
        #[cfg(target_os = "linux")]
        {
            const PAGE: usize = 4096;
            // Margins: the thread's first frames above `top`'s estimate, and this frame's own.
            const MARGIN: usize = 64 * 1024;
            let marker = 0u8;
            let here = std::ptr::addr_of!(marker) as usize;
            let size = engine_config::ENGINE_THREAD_STACK_BYTES;
            let lowest = (self.top - size + MARGIN).next_multiple_of(PAGE);
            let below = (here - MARGIN) & !(PAGE - 1);
            if below > lowest {
                // SAFETY: pages of this thread's own stack, below the frames in use: nothing
                // reads them before a deeper call writes them again (they come back zeroed).
                unsafe {
                    libc::madvise(
                        lowest as *mut libc::c_void,
                        below - lowest,
                        libc::MADV_DONTNEED,
                    );
                }
            }
        }
    }
}

/// Gives the heap's free pages back to the system after a run, so a pooled process idles at
/// about the size of a fresh one: glibc keeps freed blocks (a run's frames, its console lines)
/// resident otherwise, and a process that served hostile runs stayed a third larger.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Serves runs until the addon hangs up. A second thread prepares instances and drops used
/// ones, so both happen while a run executes; the process says `READY` only once the next
/// instance is prepared, so a run never waits on either.
pub fn serve(runner: Arc<Runner>, inbox: Receiver<Inbound>, stop: &AtomicBool) {
    let stack = EngineStack::here();
    let mut link = Link {
        out: BufWriter::new(std::io::stdout()),
        inbox,
    };
    // One spare waits in the channel; the preparer holds the next until it is taken.
    let (spare_tx, spares) = mpsc::sync_channel::<Prepared>(1);
    let (used_tx, used) = mpsc::channel::<Store<RunIo>>();
    let preparer = runner.clone();
    let started = std::thread::Builder::new()
        .name("toolreg-exec-prepare".to_owned())
        // The first preparation runs guest code, which may use this much native stack.
        .stack_size(engine_config::ENGINE_THREAD_STACK_BYTES)
        .spawn(move || {
            loop {
                if spare_tx.send(preparer.prepare()).is_err() {
                    return;
                }
                // Used instances are dropped here, off the engine thread.
                let mut dropped = false;
                while let Ok(store) = used.try_recv() {
                    drop(store);
                    dropped = true;
                }
                if dropped {
                    return_freed_memory();
                }
            }
        });
    if let Err(e) = started {
        crate::fail(&format!("cannot start the preparing thread: {e}"));
    }
    loop {
        let Ok(prepared) = spares.recv() else {
            crate::fail("the preparing thread ended");
        };
        link.write(READY, &[&PROTOCOL_VERSION.to_le_bytes()]);
        // Answers and stops that arrive between runs belong to a run that is over.
        let request = loop {
            match link.inbox.recv() {
                Ok(Inbound::Run(request)) => break request,
                Ok(_) => {}
                Err(_) => std::process::exit(0),
            }
        };
        let (back, store) = runner.run(prepared, link, &request, stop);
        link = back;
        let _ = used_tx.send(store);
        stack.release_unused();
    }
}

//! The operating system's parts of the `shm` backend, and the only `unsafe` code in
//! it: shared file mappings, futexes shared between processes, process-shared robust
//! mutexes and advisory file locks (Linux).
//!
//! Why these and not a library: the backend needs a mutex that a process killed while
//! holding it cannot leave locked (glibc's robust mutexes, which the kernel releases
//! with `EOWNERDEAD` to the next locker), and a lock that dies with its process
//! (`flock`), which is how a live process is told from a dead one without trusting
//! process ids that the system reuses.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// A file mapped shared and writable: every process mapping the same file sees the
/// same bytes. Unmapped on drop.
pub(super) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    /// Kept open for the lock it may hold ([`Mapping::lock_shared`]).
    file: File,
}

// SAFETY: the mapping is plain memory shared with other processes; every access to it
// goes through atomics or through the ring's and registry's own protocol.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Creates `path` (which must not exist) of `len` zeroed bytes and maps it.
    pub(super) fn create(path: &Path, len: usize) -> io::Result<Mapping> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        file.set_len(len as u64)?;
        // Take the memory now: a memory file system that is too small (a container's
        // 64 MiB /dev/shm) then refuses here, with an error, instead of killing the
        // process with SIGBUS at the first write past its room.
        // SAFETY: reserving space in a file we own.
        let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
        if r != 0 {
            let _ = std::fs::remove_file(path);
            return Err(io::Error::new(
                io::Error::from_raw_os_error(r).kind(),
                format!(
                    "cannot reserve {len} bytes: {} (is the memory file system full? a smaller --shm-ring-bytes needs less)",
                    io::Error::from_raw_os_error(r)
                ),
            ));
        }
        Mapping::map(file, len)
    }

    /// Maps an existing file whole; fails unless it is at least `min_len` long.
    pub(super) fn open(path: &Path, min_len: usize) -> io::Result<Mapping> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let len = usize::try_from(file.metadata()?.len()).unwrap_or(0);
        if len < min_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is {len} bytes, shorter than the {min_len} it must hold",
                    path.display()
                ),
            ));
        }
        Mapping::map(file, len)
    }

    fn map(file: File, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of a file we hold open; the kernel picks the
        // address. Its bytes may change under us at any time (other processes), which
        // is why nothing reads them except through atomics or after an acquire.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: NonNull::new(ptr.cast()).expect("mmap returned null"),
            len,
            file,
        })
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Takes a shared lock on the file, held until this mapping is dropped (or the
    /// process dies): the sign that its owner lives.
    pub(super) fn lock_shared(&self) -> io::Result<()> {
        flock(&self.file, libc::LOCK_SH | libc::LOCK_NB)
    }

    /// True while some process holds the file's lock: its owner lives. (An exclusive
    /// lock taken here to test is let go at once.)
    pub(super) fn owner_alive(&self) -> bool {
        owner_alive(&self.file)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `map` mapped; no reference into it outlives
        // the mapping (the ring and registry hold the `Mapping` they point into).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

fn flock(file: &File, operation: i32) -> io::Result<()> {
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// True while another open file description holds a lock on `file`.
pub(super) fn owner_alive(file: &File) -> bool {
    match flock(file, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => {
            let _ = flock(file, libc::LOCK_UN);
            false
        }
        Err(_) => true,
    }
}

/// An exclusive lock on a file, for as long as the returned file is open.
pub(super) fn lock_exclusive(path: &Path) -> io::Result<Option<File>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Some(file)),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sleeps while `word` holds `expected`, at most `timeout` (a futex shared between
/// processes: the word lives in a shared mapping). Spurious wake-ups are possible.
pub(super) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the aligned word and sleeps; it writes nothing.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every process and thread sleeping on `word`.
pub(super) fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only wakes sleepers of the aligned word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// A mutex living in shared memory, shared between processes and robust: when its
/// holder dies, the next locker gets it (glibc reports `EOWNERDEAD` and we mark it
/// consistent). What it protects must therefore be valid at every step a holder can
/// die after, which the ring and registry arrange by publishing with one final store.
#[repr(C)]
pub(super) struct SharedMutex {
    raw: std::cell::UnsafeCell<libc::pthread_mutex_t>,
}

/// Held while alive.
pub(super) struct SharedMutexGuard<'a> {
    mutex: &'a SharedMutex,
}

impl SharedMutex {
    /// Initialises a mutex in freshly created (zeroed, not yet shared) memory.
    ///
    /// # Safety
    /// `this` points to memory of a fresh mapping that no other process uses yet.
    pub(super) unsafe fn init(this: *mut SharedMutex) -> io::Result<()> {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_mutexattr_t>::uninit();
        let check = |r: i32| {
            if r == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(r))
            }
        };
        check(libc::pthread_mutexattr_init(attr.as_mut_ptr()))?;
        check(libc::pthread_mutexattr_setpshared(
            attr.as_mut_ptr(),
            libc::PTHREAD_PROCESS_SHARED,
        ))?;
        check(libc::pthread_mutexattr_setrobust(
            attr.as_mut_ptr(),
            libc::PTHREAD_MUTEX_ROBUST,
        ))?;
        let r = libc::pthread_mutex_init((*this).raw.get(), attr.as_ptr());
        libc::pthread_mutexattr_destroy(attr.as_mut_ptr());
        check(r)
    }

    pub(super) fn lock(&self) -> SharedMutexGuard<'_> {
        // SAFETY: the mutex was initialised by its creator before the mapping was
        // published (the segment's magic number is written last).
        let r = unsafe { libc::pthread_mutex_lock(self.raw.get()) };
        if r == libc::EOWNERDEAD {
            // SAFETY: we hold it; the data is consistent by construction (see above).
            unsafe { libc::pthread_mutex_consistent(self.raw.get()) };
        } else if r != 0 {
            panic!(
                "a shared-memory mutex failed: {}",
                io::Error::from_raw_os_error(r)
            );
        }
        SharedMutexGuard { mutex: self }
    }
}

impl Drop for SharedMutexGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: we hold the lock.
        unsafe {
            libc::pthread_mutex_unlock(self.mutex.raw.get());
        }
    }
}

//! A resource limiter that sums *all* of an instance's linear memories.
//!
//! wasmtime's `StoreLimits` caps each memory separately, and a component can have many (a
//! componentize-py guest has several), so a per-memory cap would let a plugin use a multiple of
//! its budget. This limiter tracks the total across every memory of the store and refuses any
//! growth past it; the guest sees `memory.grow` fail, which normally ends in a trap.

use wasmtime::ResourceLimiter;

/// Memory budget for one store.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: usize,
    used: usize,
    exceeded: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(limit_bytes: usize) -> Self {
        Self {
            limit: limit_bytes,
            used: 0,
            exceeded: false,
        }
    }

    /// Whether any growth was refused: a trap that follows is reported as a memory limit hit.
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded
    }

    /// Bytes of linear memory currently in use by the store.
    pub(crate) fn used(&self) -> usize {
        self.used
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.used - current.min(self.used) + desired;
        if total > self.limit {
            self.exceeded = true;
            tracing::debug!(total, limit = self.limit, "memory growth refused");
            return Ok(false);
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Tables are bounded by the pool's slot size; a generous fixed cap keeps a runaway
        // table from eating host memory in the non-pooling configuration.
        Ok(desired <= 1 << 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_memory() {
        let mut l = MemoryLimiter::new(100);
        assert!(l.memory_growing(0, 60, None).unwrap_or(false));
        // A second memory of 60 would fit a per-memory cap of 100, but not the total.
        assert!(!l.memory_growing(0, 60, None).unwrap_or(true));
        assert!(l.exceeded());
        assert!(l.memory_growing(0, 40, None).unwrap_or(false));
        assert_eq!(l.used(), 100);
    }

    #[test]
    fn growth_counts_the_difference() {
        let mut l = MemoryLimiter::new(100);
        assert!(l.memory_growing(0, 10, None).unwrap_or(false));
        assert!(l.memory_growing(10, 90, None).unwrap_or(false));
        assert!(!l.memory_growing(90, 101, None).unwrap_or(true));
        assert_eq!(l.used(), 90);
    }
}

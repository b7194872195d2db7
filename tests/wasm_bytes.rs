//! Hand-written WebAssembly binaries for tests that need a component no toolchain would emit
//! (a compile bomb, one past a pooling limit): the two preambles, the section encoding, and a
//! component with as many core instances, memories and tables as a test asks for.
//!
//! Shared by the workspace tests (`guild_tests::wasm_bytes`) and the `guild` binary's tests,
//! which include this file with `#[path]`: it depends on nothing but std.

/// The preamble of a core module: magic and version 1.
pub const CORE_MODULE: &[u8] = b"\0asm\x01\0\0\0";

/// The preamble of a component: magic, version 0x0d and layer 1.
pub const COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

/// Appends section `id` with `contents` (its size as unsigned LEB128 first).
pub fn section(out: &mut Vec<u8>, id: u8, contents: &[u8]) {
    out.push(id);
    out.extend(leb128(contents.len()));
    out.extend_from_slice(contents);
}

/// `n` as unsigned LEB128, the encoding of every count and size in the binary format.
pub fn leb128(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A component that instantiates one core module `instances` times; the module defines
/// `memories` memories and `tables` tables (so the component has `instances` times as many).
pub fn pool_heavy_component(instances: usize, memories: usize, tables: usize) -> Vec<u8> {
    let mut module = CORE_MODULE.to_vec();
    if tables > 0 {
        let mut t = leb128(tables);
        for _ in 0..tables {
            t.extend([0x70, 0x00, 0x00]); // funcref, no maximum, 0 elements
        }
        section(&mut module, 4, &t);
    }
    if memories > 0 {
        let mut m = leb128(memories);
        for _ in 0..memories {
            m.extend([0x00, 0x00]); // no maximum, 0 pages
        }
        section(&mut module, 5, &m);
    }
    let mut component = COMPONENT.to_vec();
    section(&mut component, 1, &module);
    let mut inst = leb128(instances);
    for _ in 0..instances {
        inst.extend([0x00, 0x00, 0x00]); // instantiate module 0 with no arguments
    }
    section(&mut component, 2, &inst);
    component
}

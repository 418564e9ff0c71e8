// Compiles src/bpf/main.bpf.c into a skeleton and src/bpf/intf.h into Rust
// bindings. The BPF compiler is clang (BPF_CLANG, default `clang`); sched_ext
// needs clang >= 16, and this project pins clang-19 (see tools/versions.env).
use std::process::Command;

fn main() {
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang".into());
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    if Command::new(&clang).arg("--version").output().is_err() {
        panic!(
            "BPF compiler `{clang}` not found: install Debian's clang-19 \
             (apt-get install clang-19) and build with BPF_CLANG=clang-19"
        );
    }
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}

// Compiles src/bpf/main.bpf.c into a skeleton and src/bpf/intf.h into Rust
// bindings. The BPF compiler is $BPF_CLANG, else `clang`, else `clang-19`
// (the version this project pins in tools/versions.env).
use std::process::Command;

fn works(clang: &str) -> bool {
    Command::new(clang)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn main() {
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    let clang = match std::env::var("BPF_CLANG") {
        Ok(c) => c,
        Err(_) if works("clang") => "clang".into(),
        Err(_) => "clang-19".into(),
    };
    if !works(&clang) {
        panic!(
            "BPF compiler `{clang}` not found: install Debian's clang-19 \
             (apt-get install clang-19) and build with BPF_CLANG=clang-19"
        );
    }
    // scx_cargo reads BPF_CLANG itself.
    // SAFETY: the build script is single-threaded here.
    unsafe { std::env::set_var("BPF_CLANG", &clang) };
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}

//! Prints the machine this process may use.
//!
//! `cargo run -p strata-topology --example topology` prints a readable summary;
//! `-- --json` prints one JSON object instead. With `--features hwloc`, `--hwloc` uses the
//! hwloc source; `--fixture DIR` reads a sysfs-shaped fixture folder.

use std::process::ExitCode;

use strata_topology::{SysfsSource, TopologySource};

const USAGE: &str = "usage: topology [--json] [--fixture DIR] [--hwloc (feature hwloc)]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("topology: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut json = false;
    let mut source: Box<dyn TopologySource> = strata_topology::live_source();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--fixture" => {
                let dir = args.next().ok_or(USAGE)?;
                source = Box::new(SysfsSource::fixture(dir));
            }
            #[cfg(feature = "hwloc")]
            "--hwloc" => source = Box::new(strata_topology::HwlocSource::live()),
            other => return Err(format!("unknown argument `{other}`; {USAGE}").into()),
        }
    }
    let topo = source.load()?;
    let budget = topo.default_thread_budget()?;
    if json {
        println!("{}", topo.to_json(budget));
    } else {
        print!("{}", topo.summary());
        println!("default thread budget:  {budget} (RAYON_NUM_THREADS honoured)");
    }
    Ok(())
}

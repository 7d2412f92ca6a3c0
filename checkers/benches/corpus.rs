//! Writes a corpus of generated run directories, for comparing what two builds of the checker
//! say about the same histories: `fencecheck check` of each directory by both, then their
//! `results.json` compared byte for byte (it holds no timing). A change made for speed must
//! leave every verdict, kind, evidence and diagnosis as it was (docs/design.md, "Anomaly
//! kinds"); the corpus covers each kind the generator can plant, with and without fence tokens,
//! with one waiter and with every worker waiting, with writes and a counter.
//!
//! ```text
//! cargo bench -p checkers --bench corpus -- <dir> [holds per history, default 3000]
//! ```
//! Each history gets `test.yaml` with `ttl: 1s`, so stuck-lock judges too.

use checkers::synth::{generate, Shape};
use results::AnomalyKind;
use std::io::{BufWriter, Write};
use std::path::Path;

fn write(dir: &Path, seed: u64, shape: &Shape, defect: Option<AnomalyKind>) {
    std::fs::create_dir_all(dir).expect("create dir");
    let s = generate(seed, shape, defect);
    let mut h = BufWriter::new(std::fs::File::create(dir.join("history.jsonl")).expect("history"));
    for e in &s.history {
        serde_json::to_writer(&mut h, e).expect("write");
        h.write_all(b"\n").expect("write");
    }
    h.flush().expect("flush");
    let mut r =
        BufWriter::new(std::fs::File::create(dir.join("resource.jsonl")).expect("resource"));
    for e in &s.resource {
        serde_json::to_writer(&mut r, e).expect("write");
        r.write_all(b"\n").expect("write");
    }
    r.flush().expect("flush");
    std::fs::write(dir.join("test.yaml"), "ttl: 1s\n").expect("test.yaml");
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(root) = args.first() else {
        eprintln!("usage: corpus <dir> [holds per history]");
        return;
    };
    let holds: usize = args.get(1).map_or(3000, |n| n.parse().expect("holds"));
    let fenced = Shape {
        workers: 8,
        holds,
        ..Shape::default()
    };
    let shapes = [
        ("fenced", fenced),
        (
            "tokenless",
            Shape {
                tokens: false,
                ..fenced
            },
        ),
        (
            "all-wait",
            Shape {
                workers: 5,
                all_wait: true,
                writes_per_hold: 1,
                counter: false,
                ..fenced
            },
        ),
        (
            "serial",
            Shape {
                workers: 3,
                contended: false,
                ..fenced
            },
        ),
    ];
    let mut n = 0;
    for (label, shape) in shapes {
        let defects = std::iter::once(None).chain(AnomalyKind::ALL.into_iter().map(Some));
        for defect in defects {
            for seed in 1..=2 {
                let kind = defect.map_or("valid", |k| k.as_str());
                write(
                    &Path::new(root).join(format!("{label}-{kind}-{seed}")),
                    seed,
                    &shape,
                    defect,
                );
                n += 1;
            }
        }
    }
    println!("wrote {n} run directories under {root}");
}

//! What the documentation shows must be what ships: the example adapter printed in
//! `docs/adapters.md` is the file the README's command runs, and `fencecheck clients` lists
//! every shipped adapter with its default release and the token it reports.

use std::path::Path;

fn repo(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[test]
fn the_example_adapter_in_the_protocol_page_is_the_file_that_runs() {
    let page = repo("docs/adapters.md");
    let start = page.find("```python\n").expect("a python block") + "```python\n".len();
    let end = start + page[start..].find("```").unwrap();
    assert_eq!(&page[start..end], repo("docs/example-adapter/my_lock.py"));
    assert!(page.contains(
        "fencecheck run --provider redis --client-cmd 'python3 my_lock.py' --client-dir docs/example-adapter"
    ));
}

#[test]
fn clients_lists_every_shipped_adapter_with_its_token() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("clients")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for (name, provider, default) in [
        ("kazoo", "zookeeper", "2.11.0"),
        ("curator", "zookeeper", "debian"),
        ("etcd-concurrency", "etcd", "debian"),
        ("redis-py", "redis", "8.1.0"),
        ("python-etcd3", "etcd", "debian"),
        ("python-redis-lock", "redis", "4.0.1"),
        ("portalocker", "redis", "4.4.2"),
        ("pottery", "redlock", "3.0.1"),
        ("redis-py-asyncio", "redis", "8.1.0"),
        ("etcd3gw", "etcd", "2.7.0"),
        ("aetcd", "etcd", "1.0.0"),
        ("tooz", "zookeeper", "9.1.0"),
    ] {
        let row = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in\n{text}"));
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words.get(1), Some(&provider), "{row}");
        assert!(
            words.contains(&default),
            "{name}'s default {default}: {row}"
        );
    }
    assert!(
        text.contains("PyPI kazoo: known to work 2.10.0, 2.11.0"),
        "{text}"
    );
    assert!(
        text.contains("providers: zookeeper, redis, etcd, postgres (`--provider` picks one)"),
        "tooz runs over several backends: {text}"
    );
    assert!(
        text.contains("czxid") && text.contains("create revision"),
        "{text}"
    );
    assert!(
        text.contains("etcd-lease"),
        "the recipes are listed too: {text}"
    );
}

/// Every `*.md` a tracked file names, with the files that name it; a name counts as found when
/// it is a path from the repository's root or from the naming file's folder, or the name of a
/// tracked file anywhere (a comment may say "README.md" from any depth).
fn cited_markdown(root: &Path, tracked: &[String]) -> Vec<(String, String)> {
    let text_file = |f: &str| {
        [
            ".rs", ".md", ".toml", ".yaml", ".yml", ".py", ".go", ".java", ".sh", ".txt",
        ]
        .iter()
        .any(|ext| f.ends_with(ext))
            || f.ends_with("Makefile")
            || f.starts_with("scripts/")
            || f.starts_with(".ci/")
    };
    let mut cited = Vec::new();
    for file in tracked.iter().filter(|f| text_file(f)) {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let bytes = text.as_bytes();
        let mut from = 0;
        while let Some(at) = text[from..].find(".md") {
            let end = from + at + 3;
            from = end;
            let is_word = |b: u8| b.is_ascii_alphanumeric() || b"_-./".contains(&b);
            if bytes
                .get(end)
                .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
            {
                continue;
            }
            let mut start = end - 3;
            while start > 0 && is_word(bytes[start - 1]) {
                start -= 1;
            }
            let name = text[start..end].trim_start_matches("./");
            let before = &text[..start];
            // A URL, or a file a run writes (results/runs/...), is not a citation.
            if name.len() <= 3
                || before.ends_with("://")
                || before.ends_with('/')
                || name.starts_with("results/runs/")
            {
                continue;
            }
            cited.push((file.clone(), name.to_string()));
        }
    }
    cited
}

#[test]
fn no_file_cites_a_file_that_is_not_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tracked = tracked_files(&root);
    assert!(tracked.len() > 100, "git ls-files listed {}", tracked.len());
    let exists = |file: &str, name: &str| {
        let dir = Path::new(file).parent().unwrap_or(Path::new(""));
        root.join(name).is_file()
            || root.join(dir).join(name).is_file()
            || tracked
                .iter()
                .any(|t| t == name || t.ends_with(&format!("/{name}")))
    };
    let missing: Vec<String> = cited_markdown(&root, &tracked)
        .into_iter()
        .filter(|(file, name)| !exists(file, name))
        .map(|(file, name)| format!("{file} cites {name}"))
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
    // And nothing reaches outside the repository for its design.
    let outside: Vec<&String> = tracked
        .iter()
        .filter(|f| *f != "fencecheck/tests/cli/docs.rs")
        .filter(|f| std::fs::read_to_string(root.join(f)).is_ok_and(|t| t.contains("../shared/")))
        .collect();
    assert!(outside.is_empty(), "{outside:?} cite ../shared/");
    // Nor by the bare name of a document the repository does not have (`DESIGN "Holds"`).
    let bare: Vec<&String> = tracked
        .iter()
        .filter(|f| *f != "fencecheck/tests/cli/docs.rs")
        .filter(|f| {
            std::fs::read_to_string(root.join(f)).is_ok_and(|t| {
                [
                    "DESIGN \"",
                    "(DESIGN",
                    "DESIGN's",
                    "STYLE rule",
                    "PLATFORM facts",
                ]
                .iter()
                .any(|w| t.contains(w))
            })
        })
        .collect();
    assert!(
        bare.is_empty(),
        "{bare:?} cite a design document by a name not in the repository"
    );
}

/// Every file git tracks, by its path from the repository's root.
fn tracked_files(root: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(root)
        .output()
        .expect("git ls-files");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The comment part of a source line: after `//` in Rust, Go and Java, after `#` elsewhere.
fn comment_of<'a>(file: &str, line: &'a str) -> Option<&'a str> {
    let marker = if [".rs", ".go", ".java"].iter().any(|e| file.ends_with(e)) {
        "//"
    } else {
        "#"
    };
    line.find(marker).map(|at| &line[at + marker.len()..])
}

/// A word that reads as a commit hash: git's short form (7 to 10 lowercase hex digits) or its
/// full 40, with a digit and a letter. Lease ids and image tags (12, 16 digits) are not commits.
fn looks_like_a_commit(word: &str) -> bool {
    ((7..=10).contains(&word.len()) || word.len() == 40)
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// What in a comment points at history a person who clones the repository cannot see: a
/// tracker's issue number (the word, then a number, `#` or not) or a commit hash.
fn history_in(comment: &str) -> Option<String> {
    let lower = comment.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("issue") {
        let rest = lower[from + at + 5..].trim_start_matches([' ', '#']);
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(comment.trim().to_string());
        }
        from += at + 5;
    }
    comment
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| looks_like_a_commit(w))
        .map(|w| format!("{w} in: {}", comment.trim()))
}

#[test]
fn the_history_finder_sees_issue_numbers_and_commit_hashes_and_nothing_else() {
    // Built, so that this file's own text does not name an issue.
    assert!(history_in(&format!(" Issue {}: a stall is one step", 27)).is_some());
    assert!(history_in(&format!(" fixed in issue #{}", 16)).is_some());
    assert!(history_in(" as measured at 7c40a19 on a Tuesday").is_some());
    assert!(history_in(" a keep-alive issue: renewals stop").is_none());
    assert!(history_in(" 0xcbf29ce4 is the FNV offset; 2026-12-03").is_none());
    assert!(history_in(" the decade 1234567 is only digits").is_none());
    assert!(history_in(" lease worker-1:e8e1ba4ef35b8179, token 7").is_none());
}

#[test]
fn no_source_comment_names_a_tracker_issue_or_a_commit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let source = |f: &str| {
        [
            ".rs", ".py", ".go", ".java", ".sh", ".yaml", ".yml", ".toml",
        ]
        .iter()
        .any(|e| f.ends_with(e))
            || f.ends_with("Makefile")
            || f.starts_with("scripts/")
            || f.starts_with(".ci/")
    };
    let mut found = Vec::new();
    for file in tracked_files(&root).iter().filter(|f| source(f)) {
        // This file names the patterns it refuses.
        if file == "fencecheck/tests/cli/docs.rs" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = comment_of(file, line).and_then(history_in) {
                found.push(format!("{file}:{}: {what}", n + 1));
            }
            // Nor a test's name (`fn issue_27_...`).
            let name = line.trim_start().strip_prefix("fn ").unwrap_or("");
            if history_in(&name.replace('_', " ")).is_some() {
                found.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

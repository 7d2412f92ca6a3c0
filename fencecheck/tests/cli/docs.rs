//! What the documentation shows must be what ships: the example adapter printed in
//! `docs/adapters.md` is the file the README's command runs, and `fencecheck clients` lists
//! every shipped adapter with the token it reports.

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
    for line in [
        "kazoo             zookeeper",
        "curator           zookeeper",
        "etcd-concurrency  etcd",
        "redis-py          redis",
        "python-etcd3      etcd",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    assert!(
        text.contains("czxid") && text.contains("create revision"),
        "{text}"
    );
    assert!(
        text.contains("etcd-lease"),
        "the recipes are listed too: {text}"
    );
}

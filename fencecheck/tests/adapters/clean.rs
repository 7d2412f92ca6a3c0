//! One clean run per shipped adapter (no faults, 3 workers, 8 s): the library's acquisitions
//! succeed, its holds never overlap, and its tokens are what it says in its handshake: present
//! and growing from holder to holder for the libraries with a token, absent for the others. A
//! library that fails by itself (python-etcd3's contended acquire) ends unknown naming its error.

use super::{explain, fencecheck, history, latest_run, results};

fn clean_run(client: &str, resource: &str) -> (Option<i32>, String, std::path::PathBuf) {
    let root = crate::support::infra::fresh_root("adapters", client);
    let out = fencecheck(
        &root,
        &[
            "run",
            "--quiet",
            "--client",
            client,
            "--resource",
            resource,
            "--nemesis",
            "none",
            "--workers",
            "3",
            "--time-limit",
            "8s",
            "--seed",
            "1",
        ],
    );
    (out.status.code(), explain(&out), latest_run(&root))
}

/// The ok acquires' tokens in history order, after checking their count and that no two holds
/// overlapped.
fn acquired_tokens(dir: &std::path::Path, text: &str) -> Vec<Option<u64>> {
    let tokens: Vec<Option<u64>> = history(dir)
        .iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok")
        .map(|e| e["token"].as_u64())
        .collect();
    assert!(tokens.len() >= 10, "{} acquisitions:\n{text}", tokens.len());
    let r = results(dir);
    assert_eq!(r["stats"]["concurrent-holders"]["count"], 0, "{text}");
    tokens
}

fn with_token(client: &str) {
    let (code, text, dir) = clean_run(client, "strict");
    assert_eq!(code, Some(0), "{text}");
    let tokens = acquired_tokens(&dir, &text);
    let tokens: Vec<u64> = tokens.into_iter().map(|t| t.expect("a token")).collect();
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "{client}: tokens {tokens:?}"
    );
}

#[test]
fn kazoo_acquires_without_overlap_and_its_czxids_grow() {
    with_token("kazoo");
}

#[test]
fn curator_acquires_without_overlap_and_its_czxids_grow() {
    with_token("curator");
}

#[test]
fn etcd_concurrency_acquires_without_overlap_and_its_revisions_grow() {
    with_token("etcd-concurrency");
}

#[test]
fn redis_py_acquires_without_overlap_and_reports_no_token() {
    let (code, text, dir) = clean_run("redis-py", "none");
    assert_eq!(code, Some(0), "{text}");
    assert!(acquired_tokens(&dir, &text).iter().all(Option::is_none));
}

#[test]
fn python_etcd3_fails_by_itself_and_the_run_says_so() {
    let (code, text, _) = clean_run("python-etcd3", "none");
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("unknown: the client library raised an error it does not document")
            && text.contains("python-etcd3: TypeError"),
        "{text}"
    );
}

//! The node image: one local image holding etcd, ZooKeeper, Redis (+ sentinel), PostgreSQL and
//! the network tools, built from Debian's packages because no registry may be reachable.
//!
//! Its list, tag and build are the `node-image` crate's (re-exported here); the client image
//! ([`client`]) adds the lock libraries under test on top of it.

pub mod client;
pub mod crate_build;
pub mod own_crate;
pub mod pin;
pub mod recipe;
pub mod version;
pub mod wheels;

pub use client::{build_client, client_image_tag};
pub use node_image::{
    build, node_image_tag, packages, tag_for, BuildMethod, BuildOptions, ImageError,
    IMAGE_REPOSITORY, PACKAGES_TXT,
};

/// Whether an image is present locally, and what Docker says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageStatus {
    pub tag: String,
    pub present: bool,
    pub size_bytes: Option<i64>,
    pub created: Option<String>,
}

/// Looks the image up in the local engine.
pub async fn status(docker: &bollard::Docker, tag: &str) -> Result<ImageStatus, ImageError> {
    match docker.inspect_image(tag).await {
        Ok(info) => Ok(ImageStatus {
            tag: tag.to_string(),
            present: true,
            size_bytes: info.size,
            created: info.created.map(|t| t.to_string()),
        }),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(ImageStatus {
            tag: tag.to_string(),
            present: false,
            size_bytes: None,
            created: None,
        }),
        Err(e) => Err(ImageError::Docker(e.to_string())),
    }
}

/// The installed version of each of `packages` in the image `tag`, read by `dpkg-query` in a
/// throw-away container (no network, labelled, removed at exit); a package not installed is
/// missing from the answer.
pub fn installed_versions(tag: &str, packages: &[&str]) -> Vec<(String, String)> {
    let label = format!(
        "{}=image-status-{}",
        crate::docker::RUN_LABEL,
        std::process::id()
    );
    let mut command = std::process::Command::new("docker");
    command.args(["run", "--rm", "--network", "none", "--label", &label, tag]);
    command.args(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"]);
    command.args(packages);
    let Ok(out) = command.output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, v)| !v.is_empty())
        .map(|(p, v)| (p.to_string(), v.to_string()))
        .collect()
}

/// A small text file's contents inside the image `tag` (`None` when it is not there), read like
/// [`installed_versions`].
pub fn file_in_image(tag: &str, path: &str) -> Option<String> {
    let label = format!(
        "{}=image-status-{}",
        crate::docker::RUN_LABEL,
        std::process::id()
    );
    let out = std::process::Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            "--label",
            &label,
            tag,
            "cat",
            path,
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

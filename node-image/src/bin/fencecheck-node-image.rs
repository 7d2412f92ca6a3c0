//! `fencecheck-node-image`: builds the node image (the build of `fencecheck image build`, with its
//! defaults), and nothing else. It needs only this crate, so `make run` builds it first, in
//! seconds, and lets it fetch and install the image's packages while fencecheck compiles.

use node_image::{self as image, BuildMethod, BuildOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let options = BuildOptions::node_image();
    match image::build(&options) {
        Ok(BuildMethod::Reused) => {
            println!("{}: present, reused", options.tag);
            ExitCode::SUCCESS
        }
        Ok(_) => {
            println!("{}: built", options.tag);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fencecheck-node-image: {e}");
            ExitCode::from(3)
        }
    }
}

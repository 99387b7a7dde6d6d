//! Headless command line: `run`, `triplets`, `sweep`, `score`, `bench`.

pub mod score;

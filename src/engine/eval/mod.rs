//! Evaluation: k-means on H, clustering and classification metrics, triplets kept.

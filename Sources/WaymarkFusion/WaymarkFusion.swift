// WaymarkFusion: see README.md "Architecture". Work in progress.
enum WaymarkFusionModule {}

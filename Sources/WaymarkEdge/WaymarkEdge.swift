// WaymarkEdge: see README.md "Architecture". Work in progress.
enum WaymarkEdgeModule {}

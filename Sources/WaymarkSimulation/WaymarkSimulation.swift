// WaymarkSimulation: see README.md "Architecture". Work in progress.
enum WaymarkSimulationModule {}

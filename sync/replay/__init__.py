"""The upgrade's replay: commits picked in memory, the resumable engine, its state, the gate."""

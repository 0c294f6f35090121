"""Support for every floor: atomic writes, the fact cache, worker processes, progress, faults."""

"""Training the two-headed image model: typed config, loop, data, checkpoints, calibration, DDP."""

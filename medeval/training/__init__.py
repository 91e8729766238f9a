"""Training the two-headed image model: config, loop, checkpoints, calibration, DDP, summary."""

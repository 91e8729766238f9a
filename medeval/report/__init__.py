"""Reports: printed tables and figures of evaluation results."""

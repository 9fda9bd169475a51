"""The only place that turns storage values into record bytes (and frames them as TFRecords)."""

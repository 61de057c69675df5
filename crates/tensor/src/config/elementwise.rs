//! Config: elementwise (being written).

//! Config: compare (being written).

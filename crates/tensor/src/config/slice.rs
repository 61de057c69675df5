//! Config: slice (being written).

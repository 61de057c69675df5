//! Config: dot_general (being written).

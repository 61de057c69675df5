//! Config: pad (being written).

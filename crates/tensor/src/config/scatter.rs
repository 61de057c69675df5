//! Config: scatter (being written).

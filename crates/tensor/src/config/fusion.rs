//! Config: fusion (being written).

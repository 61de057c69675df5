//! Config: gather (being written).

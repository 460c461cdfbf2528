//! Generators of random, valid HLO modules.

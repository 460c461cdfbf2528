//! The repository's classes of publicly reported XLA:CPU bugs (`corpora/public-bug-classes.toml`)
//! read against the repository's known-bug registry: every registry id a class names exists,
//! every class has a report, and the file holds what the time-to-bug report promises (classes
//! of 2025-2026, GitHub threads of openxla/xla or jax-ml/jax).

use findings::public_classes::PublicClasses;
use findings::registry::Registry;

#[test]
fn every_registry_id_the_public_classes_name_exists() {
    let registry = Registry::load(&Registry::default_dir()).unwrap();
    let classes = PublicClasses::load(&PublicClasses::default_path(), &registry)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        classes.classes.len() >= 15,
        "{} classes",
        classes.classes.len()
    );
    for c in &classes.classes {
        for id in &c.registry {
            assert!(registry.get(id).is_some(), "{}: {id}", c.id);
        }
        assert!((2025..=2026).contains(&c.year), "{}: {}", c.id, c.year);
        for i in &c.issues {
            assert!(
                i.url.starts_with("https://github.com/openxla/xla/")
                    || i.url.starts_with("https://github.com/jax-ml/jax/"),
                "{}: {}",
                c.id,
                i.url
            );
            assert_ne!(
                i.short(),
                i.url,
                "{}: not an issue or pull request URL",
                c.id
            );
            assert!(!i.reports.trim().is_empty(), "{}: {}", c.id, i.url);
        }
    }
}

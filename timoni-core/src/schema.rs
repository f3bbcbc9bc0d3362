//! The instance schema Timoni injects into every module it builds: an in-memory
//! `timoni.schema.cue` in the module's package with `#Timoni` (what `timoni:` must look like),
//! the custom health-check definitions `#HealthCheck` and `#HealthCheckForCondition`, and the
//! binding `timoni: #Timoni`.
//!
//! The CUE text is ours, written from the behaviour Timoni documents (an `apiVersion` of
//! `v1alpha1`, any `instance` struct, named apply sets of lists, optional health checks keyed
//! by name and an optional `kubeMinorVersion`); it is not a copy of Timoni's file.

/// The body of the schema overlay, without its package clause.
const SCHEMA_BODY: &str = r#"
// #Timoni is what a module's `timoni` field must hold.
#Timoni: {
	// The API version of the instance contract.
	apiVersion: string & =~"^v1alpha1$"
	// The instance: its configuration and the objects it renders.
	instance: {...}
	// Named apply sets, applied in field order.
	apply: [string]: [...]
	// Readiness rules for custom resources, keyed by name.
	healthChecks?: [string]: #HealthCheck
	kubeMinorVersion?: int
}

// #HealthCheck decides the readiness of the custom resources of one API group (and
// optionally one kind) from the live object placed in #object.
#HealthCheck: {
	group!: string & =~"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	kind?: string
	#object: {...}
	current!:    bool
	failed?:     bool
	inProgress?: bool
	...
}

// #HealthCheckForCondition is a #HealthCheck driven by status conditions: ready when the
// condition conditionType is True for the current generation, failed when the condition
// failedConditionType is True.
#HealthCheckForCondition: #HealthCheck & {
	#object: {...}
	conditionType:       *"Ready" | string
	failedConditionType: *"Stalled" | string
	current: len([for c in #object.status.conditions
		if c.type == conditionType && c.status == "True" &&
			#object.status.observedGeneration == #object.metadata.generation {c}]) > 0
	failed: len([for c in #object.status.conditions
		if c.type == failedConditionType && c.status == "True" {c}]) > 0
	inProgress: #object.status.observedGeneration != #object.metadata.generation
}

timoni: #Timoni
"#;

/// The file name of the overlay, placed in the package directory.
pub const SCHEMA_FILE: &str = "timoni.schema.cue";

/// The overlay's text for package `package`.
pub fn schema_file(package: &str) -> String {
    format!("package {package}\n{SCHEMA_BODY}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_compiles_and_rejects_other_api_versions() {
        let ok = format!(
            "{}\ntimoni: {{apiVersion: \"v1alpha1\", instance: {{}}, apply: app: []}}\n",
            schema_file("main")
        );
        let v = cue_eval::Context::new().compile_file("s.cue", &ok).unwrap();
        let r = v.export();
        assert!(r.is_ok(), "{r:?}");
        let bad = format!(
            "{}\ntimoni: {{apiVersion: \"v2\", instance: {{}}, apply: {{}}}}\n",
            schema_file("main")
        );
        let v = cue_eval::Context::new()
            .compile_file("s.cue", &bad)
            .unwrap();
        let err = v.export().unwrap_err();
        assert!(
            err.errors().iter().any(|e| e.path() == "timoni.apiVersion"),
            "{err:?}"
        );
    }
}

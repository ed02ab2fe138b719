package com.example.payments;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The sample is written against the library's API only (docs/API.md): none of its classes
 * depends on a type under {@code io.github.kafkaresilience.internal}.
 */
class SampleUsesOnlyTheApiTests {

	@Test
	void sampleDependsOnNoInternalType() {
		JavaClasses sample = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("com.example.payments");
		noClasses().that()
			.resideInAPackage("com.example.payments..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("io.github.kafkaresilience.internal..")
			.because("docs/API.md: everything under io.github.kafkaresilience.internal may change in any release")
			.check(sample);
	}

}

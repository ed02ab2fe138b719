package io.github.kafkaresilience;

import java.util.LinkedHashSet;
import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The line between the API and {@code io.github.kafkaresilience.internal} (docs/API.md):
 * a type an application can reach outside {@code internal} names no internal type in what
 * it shows, so an application never has to name one.
 */
class ApiBoundaryTests {

	static final String INTERNAL = "io.github.kafkaresilience.internal..";

	static final JavaClasses LIBRARY = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("io.github.kafkaresilience");

	@Test
	void apiTypesShowNoInternalType() {
		apiShowsNoInternalType().check(LIBRARY);
	}

	@Test
	void internalTypesAreNotUnderTheApiPackagesNames() {
		// everything internal lives under internal, and the API packages are the ones
		// docs/API.md names
		noClasses().that()
			.resideOutsideOfPackage(INTERNAL)
			.should()
			.resideOutsideOfPackages("io.github.kafkaresilience", "io.github.kafkaresilience.autoconfigure",
					"io.github.kafkaresilience.container", "io.github.kafkaresilience.dlq",
					"io.github.kafkaresilience.idempotency", "io.github.kafkaresilience.ladder",
					"io.github.kafkaresilience.listener", "io.github.kafkaresilience.observation")
			.check(LIBRARY);
	}

	static ArchRule apiShowsNoInternalType() {
		return classes().that(visibleToApplications())
			.and()
			.resideOutsideOfPackage(INTERNAL)
			.should(showNoInternalType())
			.because("docs/API.md: an application never has to name a type under io.github.kafkaresilience.internal");
	}

	/** A public class whose enclosing classes, if any, are public too. */
	static DescribedPredicate<JavaClass> visibleToApplications() {
		return DescribedPredicate.describe("are visible to applications", ApiBoundaryTests::isVisible);
	}

	static boolean isVisible(JavaClass type) {
		if (!type.getModifiers().contains(JavaModifier.PUBLIC) || type.isAnonymousClass() || type.isLocalClass()) {
			return false;
		}
		return type.getEnclosingClass().map(ApiBoundaryTests::isVisible).orElse(true);
	}

	static ArchCondition<JavaClass> showNoInternalType() {
		return new ArchCondition<>("show no type of io.github.kafkaresilience.internal") {
			@Override
			public void check(JavaClass type, ConditionEvents events) {
				Set<String> shown = new LinkedHashSet<>();
				type.getRawSuperclass()
					.filter(ApiBoundaryTests::isInternal)
					.ifPresent((superclass) -> shown.add("extends " + superclass.getName()));
				type.getInterfaces()
					.stream()
					.flatMap((face) -> face.getAllInvolvedRawTypes().stream())
					.filter(ApiBoundaryTests::isInternal)
					.forEach((face) -> shown.add("implements " + face.getName()));
				boolean extendable = !type.getModifiers().contains(JavaModifier.FINAL);
				for (JavaMember member : type.getMembers()) {
					Set<JavaModifier> modifiers = member.getModifiers();
					boolean visible = modifiers.contains(JavaModifier.PUBLIC)
							|| (extendable && modifiers.contains(JavaModifier.PROTECTED));
					if (!visible || modifiers.contains(JavaModifier.SYNTHETIC)
							|| modifiers.contains(JavaModifier.BRIDGE)) {
						continue;
					}
					for (JavaClass named : namedBy(member)) {
						if (isInternal(named)) {
							shown.add(member.getFullName() + " names " + named.getName());
						}
					}
				}
				shown.forEach((line) -> events.add(SimpleConditionEvent.violated(type, type.getName() + ": " + line)));
			}
		};
	}

	static Set<JavaClass> namedBy(JavaMember member) {
		Set<JavaClass> named = new LinkedHashSet<>();
		if (member instanceof JavaField field) {
			named.addAll(field.getType().getAllInvolvedRawTypes());
		}
		if (member instanceof JavaCodeUnit code) {
			named.addAll(code.getReturnType().getAllInvolvedRawTypes());
			for (JavaType parameter : code.getParameterTypes()) {
				named.addAll(parameter.getAllInvolvedRawTypes());
			}
			code.getThrowsClause().getTypes().forEach(named::add);
		}
		return named;
	}

	static boolean isInternal(JavaClass type) {
		return type.getPackageName().startsWith("io.github.kafkaresilience.internal");
	}

}

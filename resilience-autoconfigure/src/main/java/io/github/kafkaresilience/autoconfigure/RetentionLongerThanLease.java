package io.github.kafkaresilience.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import org.jspecify.annotations.Nullable;

/**
 * Completed idempotency keys must be remembered longer than a claim holds, or a key whose
 * claim still holds could be forgotten. The violation is reported on {@code retention},
 * so that the failure names that property and its value.
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = RetentionLongerThanLease.Validator.class)
@interface RetentionLongerThanLease {

	String message() default "must be longer than kafka.resilience.idempotency.lease, or keys whose claim still holds "
			+ "would be forgotten";

	Class<?>[] groups() default {};

	Class<? extends Payload>[] payload() default {};

	class Validator implements ConstraintValidator<RetentionLongerThanLease, ResilienceProperties.Idempotency> {

		@Override
		public boolean isValid(ResilienceProperties.@Nullable Idempotency idempotency,
				ConstraintValidatorContext context) {
			if (idempotency == null) {
				return true;
			}
			Duration lease = idempotency.getLease();
			Duration retention = idempotency.getRetention();
			if (lease == null || retention == null || retention.compareTo(lease) > 0) {
				return true; // a missing value is @NotNull's to report
			}
			context.disableDefaultConstraintViolation();
			context.buildConstraintViolationWithTemplate(context.getDefaultConstraintMessageTemplate())
				.addPropertyNode("retention")
				.addConstraintViolation();
			return false;
		}

	}

}

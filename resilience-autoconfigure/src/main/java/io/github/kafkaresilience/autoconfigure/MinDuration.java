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

import org.springframework.boot.convert.DurationStyle;

/**
 * The annotated {@link Duration} must be at least {@link #value()}; {@code null} is valid
 * ({@code @NotNull} says otherwise). Bean Validation has no constraint for durations, and
 * Hibernate Validator's own one would tie the properties to that provider.
 */
@Documented
@Target({ ElementType.FIELD, ElementType.TYPE_USE })
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = MinDuration.Validator.class)
@interface MinDuration {

	/**
	 * The shortest valid duration, as in the properties ({@code 1ms}, {@code 1s}).
	 */
	String value();

	String message() default "must be at least {value}";

	Class<?>[] groups() default {};

	Class<? extends Payload>[] payload() default {};

	class Validator implements ConstraintValidator<MinDuration, Duration> {

		private Duration min = Duration.ZERO;

		@Override
		public void initialize(MinDuration annotation) {
			this.min = DurationStyle.detectAndParse(annotation.value());
		}

		@Override
		public boolean isValid(@Nullable Duration value, ConstraintValidatorContext context) {
			return value == null || value.compareTo(this.min) >= 0;
		}

	}

}

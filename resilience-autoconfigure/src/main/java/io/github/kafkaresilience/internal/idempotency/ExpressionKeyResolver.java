package io.github.kafkaresilience.internal.idempotency;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;

/**
 * An {@link IdempotencyKeyResolver} that evaluates a SpEL expression on the record: the
 * record is the root object ({@code value.paymentId}, {@code key}, {@code headers}) and
 * beans are reachable with {@code @name} ({@code @fileHashes.of(value)}).
 *
 * @since 0.1.0
 */
final class ExpressionKeyResolver implements IdempotencyKeyResolver {

	private final String text;

	private final Expression expression;

	private final EvaluationContext context;

	/**
	 * @param expression the expression
	 * @param beanFactory resolves {@code @name} references, or {@code null}
	 * @throws IllegalArgumentException if the expression does not parse
	 */
	ExpressionKeyResolver(String expression, @Nullable BeanFactory beanFactory) {
		this.text = expression;
		try {
			this.expression = new SpelExpressionParser().parseExpression(expression);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException(
					"The idempotency key expression '" + expression + "' does not parse: " + ex.getMessage(), ex);
		}
		StandardEvaluationContext context = new StandardEvaluationContext();
		if (beanFactory != null) {
			context.setBeanResolver(new BeanFactoryResolver(beanFactory));
		}
		this.context = context;
	}

	@Override
	public String keyOf(ConsumerRecord<?, ?> record) {
		Object key = this.expression.getValue(this.context, record);
		if (key == null) {
			throw new IllegalStateException("the expression '" + this.text + "' gave null");
		}
		return key.toString();
	}

	@Override
	public String toString() {
		return this.text;
	}

}

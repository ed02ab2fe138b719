package io.github.kafkaresilience.internal.listener;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.listener.TenantResolver;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * The tenant is what a SpEL expression gives on the record as the broker holds it: the
 * record ({@link Delivery}: {@code topic}, {@code partition}, {@code key} and
 * {@code value} as bytes, {@code headers}) is the root object, {@code #key} is its key
 * and {@code #headers} its headers' last values, as UTF-8 text; beans are reachable with
 * {@code @name}.
 */
public final class ExpressionTenantResolver implements TenantResolver {

	private final String text;

	private final Expression expression;

	private final @Nullable BeanFactory beanFactory;

	/**
	 * @param expression the expression
	 * @param beanFactory resolves {@code @name} references, or {@code null}
	 * @throws IllegalArgumentException if the expression does not parse
	 */
	public ExpressionTenantResolver(String expression, @Nullable BeanFactory beanFactory) {
		this.text = expression;
		try {
			this.expression = new SpelExpressionParser().parseExpression(expression);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException(
					"The tenant expression '" + expression + "' does not parse: " + ex.getMessage(), ex);
		}
		this.beanFactory = beanFactory;
	}

	@Override
	public @Nullable String tenantOf(Delivery record) {
		// a context per record: the variables are the record's, and the poll thread and
		// the re-reader evaluate at once
		StandardEvaluationContext context = new StandardEvaluationContext(record);
		if (this.beanFactory != null) {
			context.setBeanResolver(new BeanFactoryResolver(this.beanFactory));
		}
		byte[] key = record.key();
		context.setVariable("key", (key != null) ? new String(key, StandardCharsets.UTF_8) : null);
		Map<String, String> headers = new HashMap<>();
		for (Header header : record.headers()) {
			byte[] value = header.value();
			headers.put(header.key(), (value != null) ? new String(value, StandardCharsets.UTF_8) : "");
		}
		context.setVariable("headers", headers);
		Object tenant = this.expression.getValue(context);
		return (tenant != null) ? tenant.toString() : null;
	}

	@Override
	public String toString() {
		return "expression '" + this.text + "'";
	}

}
